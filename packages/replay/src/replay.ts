import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  AirError,
  createLogger,
  errorMessage,
  type HostConfig,
  type LogSink,
  PluginHost,
  type PluginRegistry,
  rootSchema,
  Semaphore,
} from "@air/core";
import { summarizeTrajectory } from "@air/logger-sqlite";
import { scriptedRollout } from "@air/policy-scripted";
import { type Divergence, firstDivergence, spread } from "./diverge.ts";
import type { ReplayTarget } from "./target.ts";

export interface ReplayOptions {
  /** How many fresh replays (default 3). */
  times?: number;
  /** Replays at a time (default: the run's `orchestrator.max_concurrent_rollouts`, at most `times`). */
  concurrency?: number;
  signal?: AbortSignal;
  /** Log lines (default: stderr at the run's log level). */
  sink?: LogSink;
}

/** One replay of the stored commands in a fresh sandbox. */
export interface ReplayRun {
  index: number;
  /** Its priority-metric score at the end (the last validate/submit), as the store's `final_score`. */
  finalScore: number | null;
  /** Scores per turn (null where the turn scored nothing). */
  scores: Array<Record<string, number> | null>;
  divergence: Divergence | null;
  stopReason: string;
  error?: string;
}

/** What `replay` prints and writes to `<replay dir>/replay.json`. */
export interface ReplayReport {
  runDir: string;
  rolloutId: string;
  task: string;
  exampleId: string;
  priorityMetric: string | null;
  commands: string[];
  stored: { finalScore: number | null; scores: Array<Record<string, number> | null> };
  runs: ReplayRun[];
  /** The replays' final scores: n (scored replays), mean, population std, min, max. */
  distribution: ReturnType<typeof spread>;
  /** Replays whose final score equals the stored one (within 1e-9). */
  reproduced: number;
  /** Replays whose observations all match the stored ones. */
  identical: number;
  /** Turns stored with a parse error: replayed as the same reply with the same parse error. */
  parseErrorTurns: number[];
  replayDir: string;
  durationMs: number;
}

const slug = (text: string) => text.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "") || "t";

/**
 * Replays a stored trajectory's commands `times` times, each in a fresh sandbox of the run's own env (the
 * `[env]` saved in `config.resolved.json`, created through core's `PluginHost`), with the `scripted` policy, and
 * compares: final-score distribution, and per replay the first turn whose observation differs from the stored
 * one. Sandboxes and the report live under `<run dir>/replays/<rollout>-<time>/`; the run's own files and store
 * are not touched. `registry` resolves the env plugin by its saved name (the launcher's built-ins).
 * @example const report = await replayTrajectory(loadReplayTarget(dir, "s0-r0"), builtinRegistry(), { times: 5 });
 */
export async function replayTrajectory(
  target: ReplayTarget,
  registry: PluginRegistry,
  options: ReplayOptions = {},
): Promise<ReplayReport> {
  const started = Date.now();
  const times = options.times ?? 3;
  const { saved, trajectory } = target;
  const configDir = dirname(saved.file);
  const replayDir = join(
    target.runDir,
    "replays",
    `${slug(target.rolloutId)}-${new Date(started).toISOString().replace(/[:.]/g, "-")}`,
  );
  mkdirSync(replayDir, { recursive: true });
  const envDefinition = await registry.resolve("env", saved.plugins.env.plugin, configDir);
  const parsed = envDefinition.configSchema.safeParse(saved.plugins.env.config);
  if (!parsed.success)
    throw new AirError(
      "CONFIG_INVALID",
      `the run's saved [env] no longer validates: ${parsed.error.issues.map((i) => `env.${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  const commands = target.steps.map((s) => s.command);
  // The saved root holds the launcher's sections too; core's sections are what the host reads.
  const savedRoot = rootSchema().strip().safeParse(saved.root);
  if (!savedRoot.success)
    throw new AirError(
      "CONFIG_INVALID",
      `the run's saved config no longer validates: ${savedRoot.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  const root = savedRoot.data;
  // Only the env is created from this config (`host.create`); its other plugins are never resolved or made.
  const config: HostConfig = {
    file: saved.file,
    dir: configDir,
    runDir: replayDir,
    root: { ...root, run: { ...root.run, name: `${root.run.name}-replay` } },
    plugins: {},
  };
  const host = new PluginHost(config, {
    sink: options.sink,
    signal: options.signal,
    context: { evaluation: true },
  });
  const log = createLogger("replay", host.sink);
  const runs: ReplayRun[] = [];
  let status: "completed" | "failed" | "aborted" = "completed";
  let failure: string | undefined;
  try {
    const env = await host.create({
      kind: "env",
      path: "env",
      spec: saved.plugins.env.plugin,
      definition: envDefinition,
      config: parsed.data,
    });
    const split = trajectory.trajectory.split;
    const example = (await env.examples(split)).find((e) => e.id === trajectory.trajectory.exampleId);
    if (!example)
      throw new AirError(
        "CONFIG_INVALID",
        `the run's env has no ${split} example "${trajectory.trajectory.exampleId}" any more (was the task set changed?)`,
      );
    const semaphore = new Semaphore(
      Math.max(1, Math.min(times, options.concurrency ?? root.orchestrator.max_concurrent_rollouts)),
    );
    // The run's own turn limit (the env shows the remaining steps in every observation); a longer stored path
    // (a tree node's) gets room for all its commands.
    const maxTurns = Math.max(commands.length, root.orchestrator.max_turns);
    const stored = target.steps.map((s) => s.observation);
    const one = async (index: number): Promise<ReplayRun> => {
      const release = await semaphore.acquire();
      try {
        const t = await scriptedRollout({
          host,
          env,
          envName: envDefinition.name,
          example,
          commands,
          rolloutId: `replay-${slug(target.rolloutId)}-${index}`,
          groupId: `replay:${target.rolloutId}`,
          orchestrator: root.orchestrator,
          maxTurns,
          log,
          // A turn stored with a parse error is replayed as one: its reply and error, so the env answers as it did.
          wrap: (scripted) => ({
            ...scripted,
            generate: async (request) => {
              const generation = await scripted.generate(request);
              const stored = target.steps[request.turnIndex];
              return stored?.parseError
                ? { ...generation, action: { text: stored.completion, parseError: stored.parseError } }
                : generation;
            },
          }),
        });
        log.info(`replay ${index + 1}/${times} of ${target.rolloutId} done (${t.stopReason})`);
        return {
          index,
          finalScore: summarizeTrajectory(t).finalScore,
          scores: t.turns.map((x) => x.scores ?? null),
          divergence: firstDivergence(
            stored,
            t.turns.map((x) => x.observation),
          ),
          stopReason: t.stopReason,
          error: t.stopReason === "failed" ? (t.error ?? "rollout failed") : undefined,
        };
      } catch (error) {
        return {
          index,
          finalScore: null,
          scores: [],
          divergence: null,
          stopReason: "failed",
          error: errorMessage(error),
        };
      } finally {
        release();
      }
    };
    runs.push(...(await Promise.all(Array.from({ length: times }, (_, i) => one(i)))));
  } catch (error) {
    status = host.signal.aborted ? "aborted" : "failed";
    failure = errorMessage(error);
    throw error;
  } finally {
    await host.shutdown({ status, error: failure, unsettled: host.pending.unsettled() });
  }
  const storedFinal = trajectory.trajectory.finalScore;
  const report: ReplayReport = {
    runDir: target.runDir,
    rolloutId: target.rolloutId,
    task: trajectory.trajectory.task,
    exampleId: trajectory.trajectory.exampleId,
    priorityMetric: trajectory.trajectory.priorityMetric,
    commands,
    stored: { finalScore: storedFinal, scores: target.steps.map((s) => s.scores) },
    runs,
    distribution: spread(runs.map((r) => r.finalScore)),
    reproduced: runs.filter(
      (r) =>
        r.finalScore === storedFinal ||
        (r.finalScore !== null && storedFinal !== null && Math.abs(r.finalScore - storedFinal) <= 1e-9),
    ).length,
    identical: runs.filter((r) => !r.error && r.divergence === null).length,
    parseErrorTurns: target.steps.flatMap((s, i) => (s.parseError ? [i] : [])),
    replayDir,
    durationMs: Date.now() - started,
  };
  writeFileSync(join(replayDir, "replay.json"), `${JSON.stringify(report, null, 2)}\n`);
  return report;
}
