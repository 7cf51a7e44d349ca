import { createHash } from "node:crypto";
import type { Batch, Trajectory } from "@air/core";

/** A W&B table as the Python SDK writes it to `media/table/*.table.json`: `{"columns": [...], "data": [[...]]}`. */
export interface TableJson {
  columns: string[];
  data: Array<Array<string | number | null>>;
}

/** A table logged to a run: the file to upload and the history value that points at it. */
export interface TableFile {
  /** Path relative to the run's files directory, e.g. `media/table/rollouts_3_<sha256[:20]>.table.json`. */
  path: string;
  content: string;
  /** The value under the table's key in the history row (`_type: "table-file"`). */
  value: Record<string, string | number>;
}

export const ROLLOUT_COLUMNS = ["step", "task", "messages", "reward", "advantage"];

/** Longest `messages` cell; longer conversations keep their start and end. */
export const MAX_MESSAGES_CHARS = 50_000;

/**
 * The conversation of a trajectory as plain text: initial messages, then each turn's reply and observation; past
 * `MAX_MESSAGES_CHARS` the middle is cut and the number of characters left out is said.
 * @example conversationText(trajectory) // "system: …\n\nuser: …\n\nassistant: …\n\nenv: …"
 */
export function conversationText(t: Trajectory): string {
  const parts = t.initialMessages.map((m) => `${m.role}: ${m.content}`);
  for (const turn of t.turns) {
    parts.push(`assistant: ${turn.completionText}`);
    if (turn.observation) parts.push(`env: ${turn.observation}`);
  }
  if (t.error) parts.push(`error: ${t.error}`);
  const text = parts.join("\n\n");
  if (text.length <= MAX_MESSAGES_CHARS) return text;
  const keep = MAX_MESSAGES_CHARS / 2;
  return `${text.slice(0, keep)}\n\n[… ${text.length - 2 * keep} characters left out …]\n\n${text.slice(-keep)}`;
}

/** The advantage of a trajectory's trained tokens (GRPO gives every token of a rollout the same), or null. */
export function trajectoryAdvantage(batch: Batch, trajectoryId: string): number | null {
  for (const sample of batch.samples) {
    if (sample.trajectoryId !== trajectoryId) continue;
    const k = sample.lossMask.indexOf(1);
    if (k >= 0) return sample.advantages[k] ?? null;
  }
  return null;
}

/**
 * Picks `count` trajectories spread evenly over the step (so several groups show), in their order.
 * @example sampleEvenly([a, b, c, d], 2) // [a, c]
 */
export function sampleEvenly<T>(items: T[], count: number): T[] {
  if (count >= items.length) return [...items];
  if (count <= 0) return [];
  const stride = items.length / count;
  return Array.from({ length: count }, (_, k) => items[Math.floor(k * stride)]!);
}

/**
 * The rollouts table of a step: step, task, messages, reward, advantage, one row per sampled trajectory.
 * @example rolloutsTable(3, trajectories, batch, 4).data.length // 4
 */
export function rolloutsTable(
  step: number,
  trajectories: Trajectory[],
  batch: Batch,
  rows: number,
): TableJson {
  return {
    columns: ROLLOUT_COLUMNS,
    data: sampleEvenly(trajectories, rows).map((t) => [
      step,
      t.task,
      conversationText(t),
      t.reward ?? null,
      trajectoryAdvantage(batch, t.id),
    ]),
  };
}

/**
 * The file and history value of a table logged under `key` at `step`, named and described as the Python SDK
 * does (wandb/sdk/data_types: `<key>_<step>_<sha256[:20]>.table.json` under `media/table/`, value
 * `{_type: "table-file", sha256, size, path, ncols, nrows, log_mode}`).
 * @example tableFile("rollouts", 3, { columns: ["a"], data: [[1]] }).path // "media/table/rollouts_3_….table.json"
 */
export function tableFile(key: string, step: number, table: TableJson): TableFile {
  const content = JSON.stringify(table);
  const sha256 = createHash("sha256").update(content).digest("hex");
  const safeKey = key.replace(/[^A-Za-z0-9_.-]/g, "_");
  const path = `media/table/${safeKey}_${step}_${sha256.slice(0, 20)}.table.json`;
  return {
    path,
    content,
    value: {
      _type: "table-file",
      sha256,
      size: Buffer.byteLength(content),
      path,
      ncols: table.columns.length,
      nrows: table.data.length,
      log_mode: "IMMUTABLE",
    },
  };
}
