import type { AuditFindings, RunSummary, StartRunOptions, WeightsRef } from "@air/core";
import { readAuditFindings } from "./builtins.ts";
import { writeDockerHosts } from "./containers.ts";
import type { FinalWeights } from "./final-weights.ts";
import { type GpuMap, planGpus } from "./gpus.ts";
import { pluginSpecs } from "./launch-parts.ts";
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

/**
 * What a run starts from, settled before any process starts: the run's plan (the derived config, needs, process
 * kinds, URLs, ports, loggers, where the launcher keeps its state) and what this machine adds to it.
 */
export interface LaunchPlan {
  /** The run's plan: read, never changed. */
  readonly run: RunPlan;
  /** The latest audit's findings, read once from the run's store: preflight and every plugin (`ctx.audit`) get them. */
  readonly audit?: AuditFindings;
  /** The GPU ids each part gets (`planGpus`, once, before preflight checks them). */
  readonly gpus: GpuMap;
  readonly startStep: number;
  readonly initialWeights?: WeightsRef;
}

/**
 * Plans a launch: the GPU map, preflight on it, the start step (and weights) on `--resume`, `config.resolved.json`,
 * the docker hosts file. Returns the plan, or the result to return at once (bad input: exit 2).
 */
export async function planLaunch(
  run: RunPlan,
  options: LaunchOptions,
  err: (text: string) => void,
): Promise<LaunchPlan | LaunchResult> {
  const { config, stateDir, worker } = run;
  const env = options.env ?? process.env;
  const { root, runDir } = config;
  const badInput = (error: string): LaunchResult => ({
    exitCode: EXIT.badInput,
    error,
    killed: [],
    removedContainers: [],
  });
  const audit = await readAuditFindings(config);
  const gpus = planGpus(root.deployment, env);
  if (root.launcher.preflight) {
    const checks = await runPreflight({ run, gpus, audit }, { env });
    const failed = checks.filter((c) => c.status === "fail");
    if (failed.length > 0) {
      err(`preflight failed:\n${formatChecks(failed)}\n`);
      return badInput("preflight failed");
    }
  }
  if (gpus.problem) {
    err(`error: ${gpus.problem}\n`);
    return badInput(gpus.problem);
  }
  let lastStep: number | undefined;
  try {
    lastStep = readLastCompletedStep(runDir);
  } catch (error) {
    err(`error: ${(error as Error).message}\n`);
    return badInput((error as Error).message);
  }
  const startStep = options.resume ? (lastStep ?? -1) + 1 : 0;
  const initialWeights = options.resume
    ? resumeWeights(config.plugins.trainer, run.launch, startStep)
    : undefined;
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
    gpus: gpus.map,
    startStep,
    launcherPid: process.pid,
    httpRequestLimit: currentHttpRequestLimit(),
  });
  // A worker node runs no orchestrator, so no sandbox: it must not sweep the master's containers.
  if (!worker) writeDockerHosts(runDir, run.needs.dockerHosts ?? []);
  return { run, gpus: gpus.map, startStep, initialWeights, audit };
}
