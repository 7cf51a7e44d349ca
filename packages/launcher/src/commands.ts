import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { ProcessSpec } from "@air/core";
import type { GpuMap } from "./gpus.ts";
import { cudaIds } from "./local-paths.ts";
import type { RunPlan } from "./run-plan.ts";
import type { ChildSpec } from "./supervisor.ts";

/**
 * Writes the config files a process declared, each whole before it is visible (a temporary file, then a rename: a
 * process never parses a half-written one), then gives its command and environment. On a trainer worker node the
 * master's files (`owner: "master"`) are left alone: one writer per file. The worker's ranks read the master's
 * copy on the shared output dir, which the master wrote before its torchrun joined the rendezvous that the
 * worker's ranks wait for, so every rank loads the same resume step.
 */
function started(spec: ProcessSpec, worker = false): Pick<ChildSpec, "argv" | "env"> {
  for (const file of spec.files) {
    if (worker && file.owner === "master") continue;
    mkdirSync(dirname(file.path), { recursive: true });
    const tmp = `${file.path}.${process.pid}.tmp`;
    writeFileSync(tmp, file.text);
    renameSync(tmp, file.path);
  }
  return { argv: spec.argv, env: spec.env };
}

/**
 * The inference child the plan starts, or undefined for `kind = "external"`: the command, environment and config
 * files its process kind declares (`launch.processes`), health-checked at the server's `health_paths` (and the
 * engine's, behind a router).
 */
export async function inferenceChild(run: RunPlan, gpus: GpuMap): Promise<ChildSpec | undefined> {
  if (!run.inference) return undefined;
  const { kind, ctx } = run.inference;
  const { inference: inf } = run.config.root;
  const { inference: base, engine } = run.urls;
  const paths = inf.health_paths.map((p) => (p.startsWith("/") ? p : `/${p}`));
  const ids = cudaIds(run.config.root.deployment.device, gpus.inference);
  const spec = kind.spec({ ...ctx, gpuIds: ids, gpuCount: gpus.inference.length });
  return {
    role: "inference",
    // behind a router: the router's answers, and the engine's own (the admin calls go there)
    healthUrls: [
      ...paths.map((p) => `${base}${p}`),
      ...(engine === base ? [] : paths.map((p) => `${engine}${p}`)),
    ],
    startupTimeoutMs: inf.startup_timeout_ms,
    ...started(spec),
  };
}

/**
 * The trainer child the plan starts, or undefined for `kind = "none"`: what its process kind declares (prime-rl:
 * torchrun or its `trainer` entrypoint on a generated or given trainer TOML), resuming from `resume.primeStep`
 * (the trainer's own checkpoint step).
 */
export async function trainerChild(
  run: RunPlan,
  gpus: GpuMap,
  resume: { primeStep?: number } = {},
): Promise<ChildSpec | undefined> {
  if (!run.trainer) return undefined;
  const { kind, ctx } = run.trainer;
  const ids = cudaIds(run.config.root.deployment.device, gpus.trainer);
  const spec = kind.spec({
    ...ctx,
    gpuIds: ids,
    gpuCount: gpus.trainer.length,
    resumeStep: resume.primeStep,
  });
  const { startup_timeout_ms } = run.config.root.trainer_process;
  return {
    role: "trainer",
    startupTimeoutMs: startup_timeout_ms,
    exitZeroOk: true,
    ...started(spec, run.worker),
  };
}

/** The children a launch starts, built from its plan and GPUs on demand (a restart builds the trainer again). */
export interface PlannedChildren {
  inference(): Promise<ChildSpec | undefined>;
  /** The trainer, resuming from `primeStep` (its own checkpoint step) when given. */
  trainer(primeStep?: number): Promise<ChildSpec | undefined>;
}

/**
 * The children of a launch: the inference server and the trainer the plan starts, on the launch's GPUs.
 * @example const children = plannedChildren(plan, gpus); const spec = await children.trainer(3);
 */
export function plannedChildren(run: RunPlan, gpus: GpuMap): PlannedChildren {
  return {
    inference: () => inferenceChild(run, gpus),
    trainer: (primeStep) => trainerChild(run, gpus, { primeStep }),
  };
}

export { inferenceBaseUrl } from "./urls.ts";
