import type { AuditFindings, RunSummary, StartRunOptions, WeightsRef } from "@air/core";
import { readAuditFindings } from "./builtins.ts";
import { writeDockerHosts } from "./containers.ts";
import type { FinalWeights } from "./final-weights.ts";
import type { GpuMap } from "./gpus.ts";
import { gpuMapFor, isTrainerWorker, nodeStateDir, pluginSpecs } from "./launch-parts.ts";
import { formatChecks, runPreflight } from "./preflight.ts";
import { currentHttpRequestLimit } from "./respawn.ts";
import { resumeWeights } from "./resume.ts";
import type { RunPlan } from "./run-plan.ts";
import { readLastCompletedStep, writeResolvedConfig } from "./rundir.ts";

/** Exit codes: 0 ok, 1 the run failed, 2 bad input (config, arguments, preflight), 130 interrupted. */
export const EXIT = { ok: 0, failed: 1, badInput: 2, interrupted: 130 } as const;

export interface LaunchOptions {
  /** Continue from the step after the last one recorded in `<runDir>/progress.json`. */
  resume?: boolean;
  /** Aborting stops the run in order (SIGINT/SIGTERM to the launcher). */
  signal?: AbortSignal;
  /** Aborting skips the grace periods (a second SIGINT). */
  force?: AbortSignal;
  /** Progress output (default: stdout) and diagnostics (default: stderr). */
  out?: (text: string) => void;
  err?: (text: string) => void;
  tty?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Passed to core's startRun (tests: onOrchestrator, sink). */
  run?: Pick<StartRunOptions, "sink" | "onOrchestrator">;
}

export interface LaunchResult {
  exitCode: number;
  summary?: RunSummary;
  /** Why the run stopped early: a child's exit, a failed start, preflight. */
  error?: string;
  /** Processes that had to be SIGKILLed and containers removed at teardown. */
  killed: string[];
  removedContainers: string[];
  /** The trained model (`<run dir>/final-weights`), when the run finished a step with the prime-rl trainer. */
  finalWeights?: FinalWeights;
}

/** What a run starts from, settled before any process starts. */
export interface LaunchPlan {
  /** The run's plan (the derived config, needs, processes, URLs): read, never changed. */
  run: RunPlan;
  /** The latest audit's findings, read once from the run's store: preflight and every plugin (`ctx.audit`) get them. */
  audit?: AuditFindings;
  gpus: GpuMap;
  startStep: number;
  initialWeights?: WeightsRef;
  /** Where this launcher keeps its pid file, logs and resolved config (the run dir, or a worker's node dir). */
  stateDir: string;
  /** A trainer worker node (node_rank > 0): only the trainer runs here. */
  worker: boolean;
  /** The run's plugins use docker: sweep its containers at teardown (never on a worker node). */
  usesDocker: boolean;
}

/**
 * Plans a run: preflight, the GPU map, the start step (and weights) on `--resume`, `config.resolved.json`, the
 * docker hosts file. Returns the plan, or the result to return at once (bad input: exit 2).
 */
export async function planLaunch(
  run: RunPlan,
  options: LaunchOptions,
  err: (text: string) => void,
): Promise<LaunchPlan | LaunchResult> {
  const { config } = run;
  const env = options.env ?? process.env;
  const { root, runDir } = config;
  const stateDir = nodeStateDir(config);
  const worker = isTrainerWorker(config);
  const badInput = (error: string): LaunchResult => ({
    exitCode: EXIT.badInput,
    error,
    killed: [],
    removedContainers: [],
  });
  const audit = await readAuditFindings(runDir);
  if (root.launcher.preflight) {
    const checks = await runPreflight(config, { env, audit });
    const failed = checks.filter((c) => c.status === "fail");
    if (failed.length > 0) {
      err(`preflight failed:\n${formatChecks(failed)}\n`);
      return badInput("preflight failed");
    }
  }
  let gpus: GpuMap;
  let lastStep: number | undefined;
  try {
    gpus = gpuMapFor(config, env);
    lastStep = readLastCompletedStep(runDir);
  } catch (error) {
    err(`error: ${(error as Error).message}\n`);
    return badInput((error as Error).message);
  }
  const startStep = options.resume ? (lastStep ?? -1) + 1 : 0;
  const initialWeights = options.resume ? resumeWeights(config, startStep) : undefined;
  if (options.resume) {
    const from = initialWeights?.path
      ? `weights ${initialWeights.path}`
      : "the base weights (no finished broadcast found)";
    err(`resuming ${runDir} at step ${startStep} from ${from}\n`);
  } else if (lastStep !== undefined)
    err(
      `[launcher] ${runDir} has steps up to ${lastStep}; starting again at 0 (--resume continues instead)\n`,
    );
  writeResolvedConfig(stateDir, {
    file: config.file,
    root,
    plugins: pluginSpecs(config),
    gpus,
    startStep,
    launcherPid: process.pid,
    httpRequestLimit: currentHttpRequestLimit(),
  });
  const { needs } = run;
  // A worker node runs no orchestrator, so no sandbox: it must not sweep the master's containers.
  if (!worker) writeDockerHosts(runDir, needs.dockerHosts ?? []);
  const usesDocker = !worker && (needs.dockerImages.length > 0 || (needs.dockerHosts?.length ?? 0) > 0);
  return { run, gpus, startStep, initialWeights, stateDir, worker, usesDocker, audit };
}
