import { type Group, type Sample, SCHEMA_VERSION, type Trajectory, type Turn } from "../types.ts";

/**
 * A finished turn with neutral defaults (one prompt token, one completion token, logprob −1 per completion
 * token, version 0, temperature 1); `fields` replace any of them.
 * @example
 * const t = makeTurn({ index: 2, scores: { rmse: 7 }, stepKind: "validate" });
 */
export function makeTurn(fields: Partial<Turn> = {}): Turn {
  const completionTokenIds = fields.completionTokenIds ?? [2];
  return {
    index: 0,
    promptMessages: [],
    completionText: "",
    promptTokenIds: [1],
    completionTokenIds,
    completionLogprobs: Array.from(completionTokenIds, () => -1),
    finishReason: "stop",
    action: { text: "" },
    observation: "",
    policyVersion: 0,
    temperature: 1,
    timing: { generateMs: 0, envMs: 0 },
    ...fields,
  };
}

/**
 * A finished trajectory (id "t", example "e", group "0:e", step 0, no turns, stop reason "done"); `fields`
 * replace any default.
 * @example
 * const t = makeTrajectory({ id: "a", reward: 1, turns: [makeTurn(), makeTurn({ index: 1 })] });
 */
export function makeTrajectory(fields: Partial<Trajectory> = {}): Trajectory {
  return {
    schemaVersion: SCHEMA_VERSION,
    id: "t",
    exampleId: "e",
    task: "t",
    groupId: "0:e",
    step: 0,
    policyVersions: [0],
    initialMessages: [],
    turns: [],
    stopReason: "done",
    metrics: {},
    timing: { startMs: 0, endMs: 0 },
    ...fields,
  };
}

/**
 * A group of trajectories of one example (`exampleId` defaults to the group id).
 * @example
 * const g = makeGroup("g0", [makeTrajectory({ id: "a", reward: 1 }), makeTrajectory({ id: "b", reward: 0 })]);
 */
export function makeGroup(id: string, trajectories: Trajectory[], fields: Partial<Group> = {}): Group {
  return { id, exampleId: id, step: 0, trajectories, ...fields };
}

/**
 * The sample of one turn as the simplest strategy builds it: prompt tokens (masked out, logprob 0) then
 * completion tokens (trained, with their logprobs); advantages are left for the loop to fill.
 * @example
 * const s = turnSample(trajectory, trajectory.turns[0]!); // s.lossMask = [0, …, 1, …]
 * // `position`: the turn's place in `trajectory.turns` (what spans name; differs from `turn.index` in a tree node)
 */
export function turnSample(trajectory: Trajectory, turn: Turn, position = turn.index): Sample {
  const p = turn.promptTokenIds.length;
  const c = turn.completionTokenIds.length;
  return {
    trajectoryId: trajectory.id,
    groupId: trajectory.groupId,
    tokenIds: [...turn.promptTokenIds, ...turn.completionTokenIds],
    lossMask: [...new Array<number>(p).fill(0), ...new Array<number>(c).fill(1)],
    logprobs: [...new Array<number>(p).fill(0), ...turn.completionLogprobs],
    advantages: [],
    spans: [{ turn: position, start: p, end: p + c }],
    temperature: turn.temperature,
    policyVersion: turn.policyVersion,
    truncatedTokens: 0,
  };
}

/**
 * A sample with neutral defaults (two prompt tokens masked out, one trained token); `fields` replace any.
 * @example
 * const s = makeSample({ trajectoryId: "a", advantages: [0, 0, 1] });
 */
export function makeSample(fields: Partial<Sample> = {}): Sample {
  return {
    trajectoryId: "t",
    groupId: "0:e",
    tokenIds: [1, 2, 3],
    lossMask: [0, 0, 1],
    logprobs: [0, 0, -1],
    advantages: [],
    spans: [{ turn: 0, start: 2, end: 3 }],
    temperature: 1,
    policyVersion: 0,
    truncatedTokens: 0,
    ...fields,
  };
}
