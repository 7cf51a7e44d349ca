import { mkdirSync } from "node:fs";
import type { z } from "zod";
import type { ResolvedConfig, ResolvedPlugin } from "./config/load.ts";
import { AirError, wrapError } from "./errors.ts";
import { EventBus, type EventHandlers, type EventName, type EventPayload, type LogLevel } from "./events.ts";
import { createLogger, type Logger, type LogSink, stderrSink } from "./log.ts";
import type { RecordedRollout } from "./loop/resume.ts";
import type { RewardEntry } from "./loop/rewards.ts";
import { PendingWork } from "./pending.ts";
import type { PluginBase, PluginContext, PluginInstances, PluginKind } from "./plugin.ts";

/**
 * What the host reads of a run's config. The plugin sections are optional: a host that only creates what it is
 * handed (`create`: replay's env) needs none; `createRunParts` and `createRolloutParts` name a missing one.
 */
export type HostConfig<E extends Record<string, z.ZodType> = Record<never, z.ZodType>> = Omit<
  ResolvedConfig<E>,
  "plugins"
> & { plugins: Partial<ResolvedConfig["plugins"]> };

/**
 * What the caller (the launcher) tells every plugin besides the config: see `PluginContext`. `audit` is the
 * latest audit's findings, which the launcher reads from the run's store once, so plugins never open it.
 */
export type HostContext = Pick<
  PluginContext,
  "inferenceUrl" | "envGpuIds" | "evaluation" | "resume" | "audit"
>;

export interface PluginHostOptions {
  /** Where log lines go besides the bus (default: stderr at `run.log_level`). */
  sink?: LogSink;
  /** Aborting it stops the run: `host.signal` follows it. */
  signal?: AbortSignal;
  /** Context fields the launcher fills (the inference server's URL, sandbox GPUs, the audit's findings). */
  context?: HostContext;
}

/** The plugins of one run, created by `PluginHost.createRunParts`. */
export interface HostedParts {
  env: PluginInstances["env"];
  policy: PluginInstances["policy"];
  trainer: PluginInstances["trainer"];
  advantage: PluginInstances["advantage"];
  strategy: PluginInstances["strategy"];
  rewards: RewardEntry[];
  names: { env: string; policy: string; trainer: string };
}

interface Created {
  label: string;
  kind: PluginKind;
  instance: PluginBase;
}

/**
 * The one plugin host, used by `rl` (core's `startRun`), `eval` and `audit`: creates every plugin from one shared
 * context, runs every event handler through one function that labels its errors `[plugin x] hook "y": …` and
 * bounds it with `orchestrator.timeouts.hook_ms`, and closes the plugins in one order — the reverse of creation,
 * one at a time, with `run:end` emitted after the last non-logger closed, so the loggers (created first) still
 * see it.
 * @example
 * const host = new PluginHost(config, { signal });
 * await host.createLoggers();
 * const parts = await host.createRunParts();
 * ... // run rollouts with parts, host.bus, host.pending
 * await host.shutdown({ status: "completed", unsettled: [] });
 */
export class PluginHost<E extends Record<string, z.ZodType> = Record<never, z.ZodType>> {
  readonly bus: EventBus;
  readonly pending = new PendingWork();
  readonly log: Logger;
  readonly sink: LogSink;
  private readonly controller = new AbortController();
  private readonly created: Created[] = [];
  private readonly detach: () => void;

  constructor(
    readonly config: HostConfig<E>,
    private readonly options: PluginHostOptions = {},
  ) {
    const outer = options.signal;
    const onAbort = () => this.controller.abort();
    if (outer?.aborted) this.controller.abort();
    outer?.addEventListener("abort", onAbort, { once: true });
    this.detach = () => outer?.removeEventListener("abort", onAbort);
    mkdirSync(config.runDir, { recursive: true });
    const baseSink = options.sink ?? stderrSink(config.root.run.log_level as LogLevel);
    this.sink = (level, source, message) => {
      baseSink(level, source, message);
      void this.bus?.emit("log", { level, source, message, timeMs: Date.now() });
    };
    this.log = createLogger("core", this.sink);
    const hookMs = config.root.orchestrator.timeouts.hook_ms;
    this.bus = new EventBus(
      (name, error, label) => this.log.warn(wrapError(error, "HOOK_FAILED", label, name).message),
      (label, name, call) =>
        this.pending.run(`${label} hook "${name}"`, hookMs, call, { plugin: label, hook: name }),
    );
  }

  /** Aborted when the run stops (the caller's signal, or `shutdown`). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Stops the run: every plugin's `ctx.signal` aborts. */
  abort(): void {
    this.controller.abort();
  }

  /** The context every plugin gets, its logger labelled with `label`. */
  context(label: string): PluginContext {
    const { config } = this;
    const root = config.root;
    const o = root.orchestrator;
    const resume = this.options.context?.resume;
    return {
      log: createLogger(label, this.sink),
      runDir: config.runDir,
      configDir: config.dir,
      runName: root.run.name,
      seed: root.run.seed,
      modelName: root.model.name,
      maxModelLen: root.model.max_model_len,
      maxTurns: root.orchestrator.max_turns,
      signal: this.signal,
      emit: (name, payload) => void this.bus.emit(name, payload),
      ...this.options.context,
      ...(resume ? { resume: { ...resume, rollouts: o.resume_rollouts } } : {}),
    };
  }

  /** Creates one plugin (bounded by `timeouts.env_open_ms`) and subscribes its hooks under its label. */
  async create<K extends PluginKind, S extends z.ZodType>(
    p: ResolvedPlugin<K, S>,
    label: string = p.definition.name,
  ): Promise<PluginInstances[K]> {
    const ctx = this.context(label);
    let instance: PluginInstances[K];
    try {
      instance = await this.pending.run(
        `${label}.create`,
        this.config.root.orchestrator.timeouts.env_open_ms,
        () => p.definition.create(p.config, ctx),
        { plugin: label, hook: "create" },
      );
    } catch (error) {
      throw wrapError(error, "HOOK_FAILED", label, "create");
    }
    this.created.push({ label, kind: p.kind, instance });
    if (instance.hooks) this.bus.onAll(instance.hooks, label);
    return instance;
  }

  /** Creates the `[[logger]]` plugins; call first, so they see everything that follows. */
  async createLoggers(): Promise<void> {
    for (const l of this.config.plugins.loggers ?? []) await this.create(l);
  }

  /** Extra handlers that are not plugins (e.g. the launcher's progress view), labelled as given. */
  on(hooks: Partial<EventHandlers>, label: string): () => void {
    return this.bus.onAll(hooks, label);
  }

  /** Creates env, policy and the reward entries: what rollouts need (eval, audit). */
  async createRolloutParts(): Promise<Pick<HostedParts, "env" | "policy" | "rewards" | "names">> {
    const env = await this.create(this.section("env"));
    const policy = await this.create(this.section("policy"));
    return { env, policy, rewards: await this.createRewards(), names: this.names() };
  }

  /** Creates every plugin a training run needs, in a fixed order: env, policy, trainer, advantage, strategy, rewards. */
  async createRunParts(): Promise<HostedParts> {
    const env = await this.create(this.section("env"));
    const policy = await this.create(this.section("policy"));
    const trainer = await this.create(this.section("trainer"));
    const advantage = await this.create(this.section("advantage"));
    const strategy = await this.create(this.section("strategy"));
    const rewards = await this.createRewards();
    return { env, policy, trainer, advantage, strategy, rewards, names: this.names() };
  }

  private async createRewards(): Promise<RewardEntry[]> {
    const rewards: RewardEntry[] = [];
    for (const r of this.config.plugins.rewards ?? [])
      rewards.push({ name: r.name, weight: r.weight, fn: await this.create(r, r.name) });
    return rewards;
  }

  private names(): HostedParts["names"] {
    return {
      env: this.section("env").definition.name,
      policy: this.section("policy").definition.name,
      trainer: this.section("trainer").definition.name,
    };
  }

  /** The config's `[kind]` section; an error naming it when this host was given none. */
  private section<K extends "env" | "policy" | "trainer" | "advantage" | "strategy">(
    kind: K,
  ): ResolvedConfig["plugins"][K] {
    const p = this.config.plugins[kind];
    if (!p) throw new AirError("CONFIG_INVALID", `the plugin host was given no [${kind}] section`);
    return p;
  }

  /** Emits an event; every handler runs labelled and bounded by `hook_ms`, a failing one is logged. */
  emit<K extends EventName>(name: K, payload: EventPayload<K>): Promise<void> {
    return this.bus.emit(name, payload);
  }

  /** What the loggers recorded of the resumed steps' rollouts (`PluginBase.recordedRollouts`; the first that has any). */
  recordedRollouts(): RecordedRollout[] {
    for (const c of this.created) {
      if (c.kind !== "logger" || !c.instance.recordedRollouts) continue;
      try {
        const recorded = c.instance.recordedRollouts();
        if (recorded.length > 0) return recorded;
      } catch (error) {
        this.log.warn(wrapError(error, "HOOK_FAILED", c.label, "recordedRollouts").message);
      }
    }
    return [];
  }

  /**
   * Whether the loggers recorded the end of the eval after `step` (`PluginBase.evalRecorded`): true when one did,
   * false when those that keep a store did not, undefined when none keeps one.
   */
  evalRecorded(step: number): boolean | undefined {
    let answer: boolean | undefined;
    for (const c of this.created) {
      if (c.kind !== "logger" || !c.instance.evalRecorded) continue;
      try {
        answer = c.instance.evalRecorded(step) || answer === true;
      } catch (error) {
        this.log.warn(wrapError(error, "HOOK_FAILED", c.label, "evalRecorded").message);
      }
    }
    return answer;
  }

  /** Every plugin's `stepMetrics()`, keyed `<label>/<key>`; a throwing one is logged and skipped. */
  stepMetrics(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const c of this.created) {
      if (!c.instance.stepMetrics) continue;
      try {
        for (const [k, v] of Object.entries(c.instance.stepMetrics())) out[`${c.label}/${k}`] = v;
      } catch (error) {
        this.log.warn(wrapError(error, "HOOK_FAILED", c.label, "stepMetrics").message);
      }
    }
    return out;
  }

  /**
   * Ends the run: aborts `signal`, closes every non-logger plugin newest first (each bounded by `hook_ms`),
   * emits `run:end`, then closes the loggers newest first. Returns the problems (also logged as warnings).
   */
  async shutdown(end: EventPayload<"run:end">): Promise<string[]> {
    this.controller.abort();
    const problems: string[] = [];
    const closeMs = this.config.root.orchestrator.timeouts.hook_ms;
    const close = async (c: Created) => {
      if (!c.instance.close) return;
      const instance = c.instance;
      try {
        await this.pending.run(`${c.label}.close`, closeMs, () => instance.close!(), {
          plugin: c.label,
          hook: "close",
        });
      } catch (error) {
        const message = wrapError(error, "HOOK_FAILED", c.label, "close").message;
        problems.push(message);
        this.log.warn(message);
      }
    };
    const newestFirst = [...this.created].reverse();
    for (const c of newestFirst.filter((c) => c.kind !== "logger")) await close(c);
    await this.emit("run:end", end);
    for (const c of newestFirst.filter((c) => c.kind === "logger")) await close(c);
    this.created.length = 0;
    this.detach();
    return problems;
  }

  /** Labels of the created plugins, oldest first (tests check the order). */
  labels(): string[] {
    return this.created.map((c) => c.label);
  }
}
