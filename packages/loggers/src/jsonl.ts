import { appendFileSync, mkdirSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import {
  definePlugin,
  EVENT_NAMES,
  type EventHandlers,
  type EventName,
  type EventPayload,
  errorMessage,
  type Trajectory,
  type Turn,
} from "@air/core";
import { z } from "zod";

export const jsonlLoggerConfig = z
  .object({
    path: z
      .string()
      .default("events.jsonl")
      .describe("output file; relative paths are relative to the run dir"),
    events: z
      .array(z.enum(EVENT_NAMES))
      .default([...EVENT_NAMES])
      .describe("which events to write"),
    include_samples: z
      .boolean()
      .default(false)
      .describe("write step:end batches with their token arrays (large); otherwise only the sample count"),
    include_prompts: z
      .boolean()
      .default(false)
      .describe(
        "write each turn's full prompt history (grows quadratically with turns); otherwise its length",
      ),
    include_tokens: z
      .boolean()
      .default(false)
      .describe("write token ids and logprobs of turns; otherwise their counts"),
    flush_ms: z.number().int().positive().default(200).describe("write buffered lines at least this often"),
  })
  .strict();

interface SlimOptions {
  include_samples: boolean;
  include_prompts: boolean;
  include_tokens: boolean;
}

function slimTurn(turn: Turn, o: SlimOptions): unknown {
  const { promptMessages, promptTokenIds, completionTokenIds, completionLogprobs, ...rest } = turn;
  return {
    ...rest,
    ...(o.include_prompts ? { promptMessages } : { promptMessageCount: promptMessages.length }),
    ...(o.include_tokens
      ? {
          promptTokenIds: Array.from(promptTokenIds),
          completionTokenIds: Array.from(completionTokenIds),
          completionLogprobs: Array.from(completionLogprobs),
        }
      : { promptTokens: promptTokenIds.length, completionTokens: completionTokenIds.length }),
  };
}

function slimTrajectory(t: Trajectory, o: SlimOptions): unknown {
  return { ...t, turns: t.turns.map((x) => slimTurn(x, o)) };
}

const same = <T>(payload: T) => payload;

/**
 * How each event is written: bulky parts (sample token arrays, prompt histories, token ids) dropped unless asked.
 * A mapped type over every event, so a new event in core that is not listed here fails `tsc`.
 */
const SLIM: { [K in EventName]: (payload: EventPayload<K>, o: SlimOptions) => unknown } = {
  "run:start": same,
  "step:start": same,
  "rollout:start": same,
  "turn:end": (p, o) => ({ ...p, turn: slimTurn(p.turn, o) }),
  "rollout:end": (p, o) => ({ trajectory: slimTrajectory(p.trajectory, o) }),
  "step:end": (p, o) => {
    const { samples, ...batch } = p.batch;
    return {
      ...p,
      trajectories: p.trajectories.map((t) => slimTrajectory(t, o)),
      batch: o.include_samples ? p.batch : { ...batch, sampleCount: samples.length },
    };
  },
  "eval:end": (p, o) => ({ ...p, trajectories: p.trajectories.map((t) => slimTrajectory(t, o)) }),
  "weights:updated": same,
  "run:end": same,
  log: same,
  "sandbox:state": same,
  "process:state": same,
};

function line<K extends EventName>(name: K, payload: EventPayload<K>, o: SlimOptions): string {
  const slimmed = SLIM[name] as (p: EventPayload<K>, o: SlimOptions) => unknown;
  return `${JSON.stringify({ event: name, timeMs: Date.now(), ...(slimmed(payload, o) as object) })}\n`;
}

/**
 * The "jsonl" logger: every event as one JSON line `{"event", "timeMs", ...payload}` in `<runDir>/events.jsonl`.
 * @example
 * [[logger]]
 * plugin = "jsonl"
 * events = ["step:end", "rollout:end"]
 */
export const jsonlLogger = definePlugin({
  name: "jsonl",
  kind: "logger",
  description: "every event as a JSON line in <run dir>/events.jsonl",
  configSchema: jsonlLoggerConfig,
  create(config, ctx) {
    const file = isAbsolute(config.path) ? config.path : resolve(ctx.runDir, config.path);
    mkdirSync(dirname(file), { recursive: true });
    let buffer: string[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (buffer.length === 0) return;
      const text = buffer.join("");
      buffer = [];
      try {
        appendFileSync(file, text);
      } catch (error) {
        ctx.log.error(`cannot write ${file}: ${errorMessage(error)}`);
      }
    };
    const hooks: Partial<EventHandlers> = {};
    const handler =
      <K extends EventName>(name: K) =>
      (payload: EventPayload<K>) => {
        buffer.push(line(name, payload, config));
        if (name === "run:end") flush();
        else if (!timer) timer = setTimeout(flush, config.flush_ms);
      };
    for (const name of config.events) Object.assign(hooks, { [name]: handler(name) });
    return { hooks, close: flush };
  },
});
