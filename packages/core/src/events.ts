import type { ResumePoint } from "./loop/resume.ts";
import type { Batch, Trajectory, Turn, WeightsRef } from "./types.ts";

/** Every event on a run's bus and its payload. All handlers of an event run concurrently. */
export interface EventHandlers {
  "run:start": (e: {
    runName: string;
    runDir: string;
    config: Record<string, unknown>;
    /** When the run started (`startRun`'s entry, before its plugins were created): step 0's clock starts here too. */
    startedAtMs?: number;
  }) => unknown;
  "step:start": (e: { step: number; policyVersion: number }) => unknown;
  "rollout:start": (e: {
    rolloutId: string;
    exampleId: string;
    task: string;
    groupId: string;
    step: number;
    policyVersion: number;
    attempt: number;
    /** "eval" for a periodic evaluation's rollout (`orchestrator.eval_every`); absent or "train" otherwise. */
    split?: "train" | "eval";
    /** Set when the rollout continues a recorded one (`rl --resume`): how many of its turns were recorded before. */
    resumedAt?: number;
    /** A tree node's parent link (`Trajectory.parent`), known from its start so a resume can rebuild the tree. */
    parent?: { trajectoryId: string; turnIndex: number };
  }) => unknown;
  /** `point`: what the env recorded to continue after this turn (`orchestrator.resume_rollouts`). */
  "turn:end": (e: { rolloutId: string; step: number; turn: Turn; point?: ResumePoint }) => unknown;
  "rollout:end": (e: { trajectory: Trajectory }) => unknown;
  "step:end": (e: {
    step: number;
    trajectories: Trajectory[];
    batch: Batch;
    metrics: Record<string, number>;
    /** Human-readable warnings, e.g. "all groups have zero reward variance". */
    warnings: string[];
  }) => unknown;
  /** A periodic evaluation (`orchestrator.eval_every`) finished: rollouts on the eval split, never trained on. */
  "eval:end": (e: {
    step: number;
    policyVersion: number;
    trajectories: Trajectory[];
    metrics: Record<string, number>;
  }) => unknown;
  "weights:updated": (e: { weights: WeightsRef; metrics: Record<string, number> }) => unknown;
  "run:end": (e: {
    status: "completed" | "failed" | "aborted";
    error?: string;
    unsettled: string[];
  }) => unknown;
  log: (e: { level: LogLevel; source: string; message: string; timeMs: number }) => unknown;
  /** A sandbox (container or local dir) changed state; for the dashboard's system page. */
  "sandbox:state": (e: {
    id: string;
    rolloutId?: string;
    state: string;
    command?: string;
    /** The Docker host it runs on, when the env spreads sandboxes over several (`[env.docker] hosts`). */
    host?: string;
  }) => unknown;
  /** A child process changed state; for the dashboard's system page. */
  "process:state": (e: { role: string; pid?: number; state: string; logPath?: string }) => unknown;
}

export type LogLevel = "debug" | "info" | "warn" | "error";
export type EventName = keyof EventHandlers;
export type EventPayload<K extends EventName> = Parameters<EventHandlers[K]>[0];

/**
 * A value for every event: a mapped type, so adding an event to `EventHandlers` without handling it here (or in a
 * logger that declares an `EventMap`) fails `tsc`.
 * @example const wanted: EventMap<boolean> = { ...ALL_EVENTS_FALSE, "step:end": true };
 */
export type EventMap<T> = { [K in EventName]: T };

const EVENT_FLAGS: EventMap<true> = {
  "run:start": true,
  "step:start": true,
  "rollout:start": true,
  "turn:end": true,
  "rollout:end": true,
  "step:end": true,
  "eval:end": true,
  "weights:updated": true,
  "run:end": true,
  log: true,
  "sandbox:state": true,
  "process:state": true,
};

/**
 * Every event name, in the order a run emits them. Exhaustive by construction (see `EventMap`).
 * @example for (const name of EVENT_NAMES) bus.on(name, (e) => write(name, e));
 */
export const EVENT_NAMES: readonly EventName[] = Object.keys(EVENT_FLAGS) as EventName[];

/**
 * How a handler is run: the host passes one that labels errors with the plugin and bounds the call with
 * `timeouts.hook_ms`. The default just calls it.
 */
export type HandlerRunner = (label: string, name: EventName, call: () => unknown) => Promise<unknown>;

/**
 * A typed event bus. `on` returns an unregister function; `emit` runs every handler concurrently (through the
 * bus's `HandlerRunner`) and reports a throwing handler to `onHandlerError`, with the label it was registered
 * under, instead of failing the emitter.
 * @example
 * const bus = new EventBus();
 * const off = bus.on("step:end", (e) => console.log(e.step), "my-logger");
 * await bus.emit("step:end", payload); off();
 */
export class EventBus {
  private readonly handlers = new Map<EventName, Set<{ label: string; fn: (payload: never) => unknown }>>();

  constructor(
    private readonly onHandlerError: (name: EventName, error: unknown, label: string) => void = () => {},
    private readonly runner: HandlerRunner = async (_label, _name, call) => call(),
  ) {}

  on<K extends EventName>(name: K, handler: EventHandlers[K], label = "?"): () => void {
    let set = this.handlers.get(name);
    if (!set) {
      set = new Set();
      this.handlers.set(name, set);
    }
    const entry = { label, fn: handler as (payload: never) => unknown };
    set.add(entry);
    return () => set.delete(entry);
  }

  /** Subscribes every handler of a hook map under one label; returns one function that removes them all. */
  onAll(hooks: Partial<EventHandlers>, label: string): () => void {
    const offs = EVENT_NAMES.flatMap((name) => {
      const handler = hooks[name];
      return handler ? [this.on(name, handler, label)] : [];
    });
    return () => {
      for (const off of offs) off();
    };
  }

  async emit<K extends EventName>(name: K, payload: EventPayload<K>): Promise<void> {
    const set = this.handlers.get(name);
    if (!set || set.size === 0) return;
    const runs = [...set].map(async ({ label, fn }) => {
      try {
        await this.runner(label, name, () => (fn as (p: EventPayload<K>) => unknown)(payload));
      } catch (error) {
        this.onHandlerError(name, error, label);
      }
    });
    await Promise.all(runs);
  }

  listenerCount(name: EventName): number {
    return this.handlers.get(name)?.size ?? 0;
  }
}
