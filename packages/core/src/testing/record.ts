import type { EventHandlers, EventName, EventPayload } from "../events.ts";

/** Every event a run emitted, in order, with typed access by name. */
export interface EventRecord {
  /** Every event in the order it was emitted, except `log` (see `of("log")`, or `runToml`'s `logs`). */
  events: Array<{ name: EventName; payload: unknown }>;
  /** The payloads of one event, in order. */
  of<K extends EventName>(name: K): Array<EventPayload<K>>;
}

/**
 * Hooks that record every event of a run (pass them as `startRun`'s `hooks`) and the record they fill.
 * @example
 * const { hooks, record } = eventRecorder();
 * await startRun(config, { hooks });
 * record.of("step:end").map((e) => e.step); // [0, 1, …]
 */
export function eventRecorder(): { hooks: EventHandlers; record: EventRecord } {
  const events: EventRecord["events"] = [];
  // Exhaustive (a mapped type over every event): a new event that is not recorded here fails `tsc`.
  const byName: { [K in EventName]: Array<EventPayload<K>> } = {
    "run:start": [],
    "step:start": [],
    "rollout:start": [],
    "turn:end": [],
    "rollout:end": [],
    "step:end": [],
    "eval:end": [],
    "weights:updated": [],
    "run:end": [],
    log: [],
    "sandbox:state": [],
    "process:state": [],
  };
  const on =
    <K extends EventName>(name: K) =>
    (payload: EventPayload<K>) => {
      if (name !== "log") events.push({ name, payload });
      byName[name].push(payload);
    };
  const hooks: EventHandlers = {
    "run:start": on("run:start"),
    "step:start": on("step:start"),
    "rollout:start": on("rollout:start"),
    "turn:end": on("turn:end"),
    "rollout:end": on("rollout:end"),
    "step:end": on("step:end"),
    "eval:end": on("eval:end"),
    "weights:updated": on("weights:updated"),
    "run:end": on("run:end"),
    log: on("log"),
    "sandbox:state": on("sandbox:state"),
    "process:state": on("process:state"),
  };
  return { hooks, record: { events, of: (name) => byName[name] } };
}
