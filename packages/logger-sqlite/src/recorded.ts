import type { RecordedRollout, ResumePoint, StopReason, Turn } from "@air/core";
import { and, asc, eq, inArray } from "drizzle-orm";
import type { StoreDb } from "./open.ts";
import { parseJson, readTrajectory, type StoredTurn } from "./read.ts";
import { turnResume } from "./schema.ts";

/** A tree node's parent link as stored (`trajectories.parent_json`). */
function parentOf(text: string | null): Pick<RecordedRollout, "parent"> {
  const parent = parseJson<{ trajectoryId?: unknown; turnIndex?: unknown } | null>(text, null);
  if (typeof parent?.trajectoryId !== "string" || typeof parent.turnIndex !== "number") return {};
  return { parent: { trajectoryId: parent.trajectoryId, turnIndex: parent.turnIndex } };
}

/** The stop reasons of a rollout that ended by itself, or a tree node that branched (an aborted one continues). */
function endedAs(stopReason: string | null): { stopReason?: StopReason } {
  const ended: StopReason[] = ["done", "max_turns", "context_length", "branched"];
  const reason = ended.find((r) => r === stopReason);
  return reason ? { stopReason: reason } : {};
}

function int32s(bytes: Uint8Array): Int32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Int32Array(bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt32(i * 4, true);
  return out;
}

function float32s(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

/** A stored turn as the loop made it: prompt, reply, observation, token ids, logprobs, version, timing. */
function turnOf(
  row: StoredTurn,
  promptIds: Int32Array,
  completionIds: Int32Array,
  logprobs: Float32Array,
): Turn {
  const action: Turn["action"] = { text: row.completion };
  if (row.command !== null) action.command = row.command;
  if (row.parseError !== null) action.parseError = row.parseError;
  const notes = parseJson<string[] | null>(row.notesJson, null);
  if (notes) action.notes = notes;
  const turn: Turn = {
    index: row.idx,
    promptMessages: row.prompt,
    completionText: row.completion,
    promptTokenIds: promptIds,
    completionTokenIds: completionIds,
    completionLogprobs: logprobs,
    finishReason: row.finishReason ?? "stop",
    action,
    observation: row.observation,
    policyVersion: row.policyVersion ?? 0,
    temperature: row.temperature ?? 1,
    timing: { generateMs: row.generateMs ?? 0, envMs: row.envMs ?? 0 },
  };
  if (row.scores) turn.scores = row.scores;
  if (row.stepKind !== null) turn.stepKind = row.stepKind;
  if (row.toolError !== null) turn.toolError = row.toolError;
  if (row.parseError !== null) turn.parseError = row.parseError;
  if (row.evaluationError !== null) turn.evaluationError = row.evaluationError;
  const info = parseJson<Record<string, unknown> | null>(row.infoJson, null);
  if (info) turn.info = info;
  return turn;
}

/**
 * The stored rollouts `ids` of run `runId` rebuilt for `rl --resume` (`RecordedRollout`): every turn with its
 * prompt, token ids (the prompt's rebuilt from the previous turn's ids and its own tail), logprobs, completion
 * mask (a masked token stays out of the loss after the resume) and version,
 * and the resume point of the last turn. A rollout whose turns do not all have their resume row is left out.
 * @example const recorded = readRecordedRollouts(db, 1, ["s3-r0", "s3-r1"]);
 */
export function readRecordedRollouts(db: StoreDb, runId: number, ids: string[]): RecordedRollout[] {
  if (ids.length === 0) return [];
  const rows = db
    .select()
    .from(turnResume)
    .where(and(eq(turnResume.runId, runId), inArray(turnResume.rolloutId, ids)))
    .orderBy(asc(turnResume.rolloutId), asc(turnResume.idx))
    .all();
  const byRollout = new Map<string, typeof rows>();
  for (const r of rows) byRollout.set(r.rolloutId, [...(byRollout.get(r.rolloutId) ?? []), r]);
  const out: RecordedRollout[] = [];
  for (const id of ids) {
    const stored = readTrajectory(db, runId, id);
    const resume = byRollout.get(id) ?? [];
    if (!stored || stored.turns.length === 0 || resume.length !== stored.turns.length) continue;
    const turns: Turn[] = [];
    let previous: Turn | undefined;
    for (const [i, row] of stored.turns.entries()) {
      const r = resume[i]!;
      if (r.idx !== row.idx) break;
      const tail = int32s(r.promptIds);
      const prompt = new Int32Array(r.promptIdsBase + tail.length);
      if (r.promptIdsBase > 0 && previous) {
        prompt.set(previous.promptTokenIds);
        prompt.set(previous.completionTokenIds, previous.promptTokenIds.length);
      }
      prompt.set(tail, r.promptIdsBase);
      previous = turnOf(row, prompt, int32s(r.completionIds), float32s(r.logprobs));
      if (r.completionMask) previous.completionMask = Array.from(r.completionMask);
      turns.push(previous);
    }
    if (turns.length !== stored.turns.length) continue;
    const t = stored.trajectory;
    const first = JSON.parse(resume[0]!.pointJson) as ResumePoint;
    if (!first.initialMessages) continue;
    out.push({
      rolloutId: id,
      step: t.step,
      groupId: t.groupId,
      exampleId: t.exampleId,
      initialMessages: first.initialMessages,
      turns,
      point: JSON.parse(resume.at(-1)!.pointJson) as ResumePoint,
      startMs: t.startedAt ?? Date.now(),
      ...parentOf(t.parentJson),
      // rollout:end was recorded: the rollout had ended (its step not trained); an aborted one goes on
      ...(t.status !== "running" ? endedAs(t.stopReason) : {}),
    });
  }
  return out;
}
