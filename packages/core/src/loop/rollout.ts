import { errorMessage } from "../errors.ts";
import type { EventBus } from "../events.ts";
import type { PendingWork } from "../pending.ts";
import type { Environment, EnvSession, GenerateRequest, Policy } from "../plugin.ts";
import { type Example, type Message, SCHEMA_VERSION, type Trajectory, type Turn } from "../types.ts";
import { setPromptMessages } from "./prompt-view.ts";
import { type RecordedRollout, type ResumePoint, resumedMessages, versionsOf } from "./resume.ts";
import { TokenLog } from "./tokens.ts";

export interface RolloutDeps {
  env: Environment;
  policy: Policy;
  bus: EventBus;
  pending: PendingWork;
  names: { env: string; policy: string };
  maxTurns: number;
  timeouts: { env_open_ms: number; env_step_ms: number; generate_ms: number };
  signal: AbortSignal;
  /** Record each turn's resume point (`orchestrator.resume_rollouts`, train rollouts of a flat run). */
  resumeRollouts?: boolean;
  /**
   * Where an ended rollout's `dropState` goes when its state must outlive the rollout: a kill before its
   * rollout:end reaches the store leaves it recorded as in flight, so its snapshots stay until its step is
   * trained (the orchestrator runs them then). Without it the state is dropped as the rollout ends.
   */
  keepState?: (step: number, drop: () => Promise<void>) => void;
}

export interface RolloutInput {
  rolloutId: string;
  example: Example;
  groupId: string;
  step: number;
  /** Continue a recorded rollout (`rl --resume`) in `session`, restored from its last resume point. */
  resume?: { session: EnvSession; recorded: RecordedRollout };
}

/**
 * Runs one episode: policy ⇄ env until the env says done, the policy hits its context limit, or `maxTurns`
 * (then the env may auto-submit through `finish`). Throws when the env or the policy fails; the caller retries.
 */
export async function runRollout(deps: RolloutDeps, input: RolloutInput): Promise<Trajectory> {
  const { env, pending, names, timeouts, signal } = deps;
  const { rolloutId, example } = input;
  const recorded = input.resume?.recorded;
  const startMs = recorded?.startMs ?? Date.now();
  const session =
    input.resume?.session ??
    (await pending.run(
      `${names.env}.open(${example.id}) for ${rolloutId}`,
      timeouts.env_open_ms,
      () => env.open(example, { rolloutId, signal }),
      { plugin: names.env, hook: "open" },
    ));
  const trajectory: Trajectory = {
    schemaVersion: SCHEMA_VERSION,
    id: rolloutId,
    exampleId: example.id,
    task: example.task,
    groupId: input.groupId,
    step: input.step,
    policyVersions: recorded ? versionsOf(recorded.turns) : [],
    initialMessages: recorded?.initialMessages ?? [],
    turns: recorded ? [...recorded.turns] : [],
    stopReason: "max_turns",
    score: example.score,
    metrics: {},
    timing: { startMs, endMs: startMs },
  };
  let ended = false;
  try {
    const initial = recorded
      ? recorded.initialMessages
      : await pending.run(`${names.env}.start ${rolloutId}`, timeouts.env_open_ms, () => session.start(), {
          plugin: names.env,
          hook: "start",
          signal,
        });
    trajectory.initialMessages = initial;
    const episode: Episode = {
      rolloutId,
      step: input.step,
      session,
      trajectory,
      messages: recorded ? resumedMessages(recorded) : [...initial],
      tokens: new TokenLog(),
    };
    let done = recorded?.point.done ?? false;
    for (let index = trajectory.turns.length; index < deps.maxTurns && !done; index++) {
      const outcome = await playTurn(deps, episode, index);
      if (outcome !== "continue" && outcome !== "done") {
        trajectory.stopReason = outcome;
        break;
      }
      done = outcome === "done";
    }
    if (done) trajectory.stopReason = "done";
    else if (trajectory.stopReason === "max_turns" && session.finish) {
      await finishEpisode(deps, session.finish.bind(session), trajectory);
    }
    episode.tokens?.trim(trajectory.turns);
    ended = trajectory.stopReason !== "aborted" && !signal.aborted;
  } finally {
    if (ended && session.dropState) {
      const dropState = session.dropState.bind(session);
      const drop = () =>
        pending
          .run(`${names.env}.dropState ${rolloutId}`, timeouts.env_open_ms, dropState, {
            plugin: names.env,
            hook: "dropState",
          })
          .catch((error) =>
            deps.bus.emit("log", logLine(names.env, `dropState failed: ${errorMessage(error)}`)),
          );
      if (deps.keepState) deps.keepState(input.step, drop);
      else await drop();
    }
    await pending
      .run(`${names.env}.close ${rolloutId}`, timeouts.env_open_ms, () => session.close(), {
        plugin: names.env,
        hook: "close",
      })
      .catch((error) => deps.bus.emit("log", logLine(names.env, `close failed: ${errorMessage(error)}`)));
    trajectory.timing.endMs = Date.now();
  }
  return trajectory;
}

/** An episode in progress: its session, the trajectory so far and the conversation the policy sees next. */
export interface Episode {
  rolloutId: string;
  step: number;
  session: EnvSession;
  trajectory: Trajectory;
  messages: Message[];
  /** The rollout's token ids, each shared prefix held once (a new log when absent). */
  tokens?: TokenLog;
  /** The last recorded turn's `Generation.promptCursor`, handed back to the policy with the next request. */
  promptCursor?: unknown;
}

/**
 * One policy ⇄ env exchange at turn `index`: generate, step, record the turn, emit turn:end. Returns "done" when
 * the env ended the episode, "context_length" / "aborted" when the rollout must stop, else "continue".
 * Used by `runRollout` and by tree rollouts (loop/tree.ts), which play a node's turns with it.
 * @example while ((await playTurn(deps, episode, i++)) === "continue" && i < deps.maxTurns) {}
 */
export async function playTurn(
  deps: RolloutDeps,
  episode: Episode,
  index: number,
): Promise<"continue" | "done" | "context_length" | "aborted"> {
  const { policy, pending, names, timeouts, signal } = deps;
  const { rolloutId, session, trajectory, messages } = episode;
  if (signal.aborted) return "aborted";
  episode.tokens ??= new TokenLog();
  const tokens = episode.tokens;
  const g0 = Date.now();
  const request: GenerateRequest = {
    messages: [...messages],
    rolloutId,
    turnIndex: index,
    signal,
    initialMessages: trajectory.initialMessages.length,
  };
  if (session.formatErrorMessage !== undefined) request.formatErrorMessage = session.formatErrorMessage;
  if (session.parseReply) request.parseReply = session.parseReply.bind(session);
  const last = trajectory.turns.at(-1);
  if (episode.promptCursor !== undefined && last !== undefined) {
    request.previousPrompt = { ids: last.promptTokenIds, cursor: episode.promptCursor };
  }
  const generation = await pending.run(
    `${names.policy}.generate ${rolloutId} turn ${index}`,
    timeouts.generate_ms,
    () => policy.generate(request),
    { plugin: names.policy, hook: "generate", signal },
  );
  const generateMs = Date.now() - g0;
  if (!trajectory.policyVersions.includes(generation.policyVersion)) {
    trajectory.policyVersions.push(generation.policyVersion);
  }
  if (generation.finishReason === "context_length") return "context_length";
  const e0 = Date.now();
  const result = await pending.run(
    `${names.env}.step ${rolloutId} turn ${index}`,
    timeouts.env_step_ms,
    () => session.step(generation.action),
    { plugin: names.env, hook: "step", signal },
  );
  const ids = tokens.append(generation.promptTokenIds, generation.completionTokenIds, trajectory.turns);
  const sent = generation.promptMessages ?? request.messages;
  const turn: Turn = {
    index,
    promptMessages: sent,
    completionText: generation.action.text,
    promptTokenIds: ids.prompt,
    completionTokenIds: ids.completion,
    completionLogprobs: tokens.appendLogprobs(generation.completionLogprobs, trajectory.turns),
    ...(generation.completionMask && { completionMask: generation.completionMask }),
    finishReason: generation.finishReason,
    action: generation.action,
    observation: result.observation,
    policyVersion: generation.policyVersion,
    temperature: generation.temperature,
    scores: result.scores,
    stepKind: result.kind,
    toolError: result.toolError,
    parseError: generation.action.parseError,
    evaluationError: result.evaluationError,
    info: result.info,
    timing: { generateMs, envMs: Date.now() - e0 },
  };
  // A view of the conversation when the policy sent it as is (no per-turn list of the whole history).
  setPromptMessages(turn, sent, messages);
  trajectory.turns.push(turn);
  episode.promptCursor = generation.promptCursor;
  messages.push({ role: "assistant", content: generation.action.text });
  messages.push({ role: "user", content: result.observation });
  const point = deps.resumeRollouts ? await resumePoint(deps, session, turn, result.done) : undefined;
  if (point && trajectory.turns.length === 1) point.initialMessages = trajectory.initialMessages;
  await deps.bus.emit("turn:end", { rolloutId, step: episode.step, turn, ...(point ? { point } : {}) });
  return result.done ? "done" : "continue";
}

/**
 * Out of turns: let the env auto-submit and credit the result to the last turn when it has no score yet.
 * @example if (session.finish) await finishEpisode(deps, session.finish.bind(session), trajectory);
 */
export async function finishEpisode(
  deps: RolloutDeps,
  finish: () => Promise<import("../types.ts").StepResult | undefined>,
  trajectory: Trajectory,
): Promise<void> {
  const result = await deps.pending.run(
    `${deps.names.env}.finish ${trajectory.id}`,
    deps.timeouts.env_step_ms,
    finish,
    { plugin: deps.names.env, hook: "finish" },
  );
  const last = trajectory.turns.at(-1);
  if (!result || !last) return;
  last.info = {
    ...last.info,
    finish: { kind: result.kind, scores: result.scores, observation: result.observation },
  };
  if (!last.scores && result.scores) {
    last.scores = result.scores;
    last.stepKind = result.kind ?? "auto_submit";
  }
  if (!last.evaluationError && result.evaluationError && !last.scores)
    last.evaluationError = result.evaluationError;
}

/** The session's state after `turn` (`EnvSession.saveState`); a failure is a warning, the turn goes on without one. */
async function resumePoint(
  deps: RolloutDeps,
  session: EnvSession,
  turn: Turn,
  done: boolean,
): Promise<ResumePoint | undefined> {
  if (!session.saveState) return undefined;
  const save = () => session.saveState!(turn.index);
  try {
    const state = await deps.pending.run(
      `${deps.names.env}.saveState turn ${turn.index}`,
      deps.timeouts.env_step_ms,
      save,
      { plugin: deps.names.env, hook: "saveState" },
    );
    return { state, done };
  } catch (error) {
    await deps.bus.emit(
      "log",
      logLine(deps.names.env, `saveState after turn ${turn.index} failed: ${errorMessage(error)}`),
    );
    return undefined;
  }
}

function logLine(source: string, message: string) {
  return { level: "warn" as const, source, message, timeMs: Date.now() };
}
