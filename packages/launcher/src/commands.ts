import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { ProcessSpec } from "@air/core";
import type { GpuMap } from "./gpus.ts";
import { isTrainerWorker } from "./launch-parts.ts";
import { cudaIds } from "./local-paths.ts";
import { inferenceKind, processContext, processSpec, trainerKind } from "./process-kinds.ts";
import type { RunConfig } from "./sections.ts";
import type { ChildSpec } from "./supervisor.ts";

/** Host a client uses to reach a server bound to `host`. */
export function clientHost(host: string): string {
  return host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host;
}

/**
 * Base URL (no `/v1`) where the admin routes (`/pause`, `/update_weights`, LoRA loads) reach the engine the
 * launcher starts: behind a router (the process kind's `enginePort`) the engine's own port, else the server itself.
 * @example engineBaseUrl(config) // "http://127.0.0.1:8100"
 */
export function engineBaseUrl(config: RunConfig): string {
  const { inference } = config.root;
  const port = inferenceKind(config)?.enginePort?.(processContext(config, "inference"));
  if (port !== undefined) return `http://${clientHost(inference.host)}:${port}`;
  return inferenceBaseUrl(config);
}

/** Base URL of the inference server (no trailing slash, no `/v1`). */
export function inferenceBaseUrl(config: RunConfig): string {
  const { inference } = config.root;
  if (inference.kind === "external") return (inference.url ?? "").replace(/\/+$/, "").replace(/\/v1$/, "");
  return `http://${clientHost(inference.host)}:${inference.port}`;
}

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
 * The inference child for `[inference]`, or undefined for `kind = "external"`: the command, environment and
 * config files the plugin that starts the kind declares (`launch.processes`), health-checked at the server's
 * `health_paths` (and the engine's, behind a router).
 */
export async function inferenceChild(config: RunConfig, gpus: GpuMap): Promise<ChildSpec | undefined> {
  const { inference: inf } = config.root;
  const kind = inferenceKind(config);
  if (!kind) return undefined;
  const base = inferenceBaseUrl(config);
  const paths = inf.health_paths.map((p) => (p.startsWith("/") ? p : `/${p}`));
  const engine = engineBaseUrl(config);
  const spec = processSpec(kind, "inference", config, {
    ids: cudaIds(config, gpus.inference),
    count: gpus.inference.length,
  });
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
 * The trainer child for `[trainer_process]`, or undefined for `kind = "none"`: what the plugin that starts the
 * kind declares (prime-rl: torchrun or its `trainer` entrypoint on a generated or given trainer TOML), resuming
 * from `resume.primeStep` (the trainer's own checkpoint step).
 */
export async function trainerChild(
  config: RunConfig,
  gpus: GpuMap,
  resume: { primeStep?: number } = {},
): Promise<ChildSpec | undefined> {
  const { trainer_process: tp } = config.root;
  const kind = trainerKind(config);
  if (!kind) return undefined;
  const ids = cudaIds(config, gpus.trainer);
  const spec = processSpec(
    kind,
    "trainer_process",
    config,
    { ids, count: gpus.trainer.length },
    resume.primeStep,
  );
  const worker = isTrainerWorker(config);
  return {
    role: "trainer",
    startupTimeoutMs: tp.startup_timeout_ms,
    exitZeroOk: true,
    ...started(spec, worker),
  };
}
