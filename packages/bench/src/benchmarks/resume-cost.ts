import { resolve } from "node:path";
import type { Environment, PluginContext } from "@air/core";
import { createMlgymEnvironment, mlgymConfigSchema } from "@air/env-mlgym";
import { spread } from "../stats.ts";

const REPO = resolve(import.meta.dir, "../../../..");
const IMAGE = process.env.AIR_TEST_IMAGE ?? "air-mlgym-test:latest";

function context(runDir: string): PluginContext {
  const log = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
  return {
    log,
    runDir,
    configDir: REPO,
    runName: "bench-resume",
    seed: 0,
    modelName: "bench",
    signal: new AbortController().signal,
    emit: () => {},
  };
}

/** One cell: a runtime and how much the agent made in the workspace. */
export interface SnapshotCost {
  runtime: "local" | "docker";
  mb: number;
  /** `saveState` per turn (the sandbox's stored snapshot and the session's counters), ms. */
  saveMs: number[];
  /** The turn it follows: `python train.py` of apartmentRent (what most quickstart turns run), ms. */
  turnMs: number[];
  /** `Environment.restore` of the last state (a new sandbox from the snapshot), ms. */
  restoreMs: number[];
  bytes: number;
  /** What each save moved out of the sandbox (`SnapshotHandle.transferredBytes`; docker only). */
  sentBytes: number[];
}

/**
 * Snapshot cost per turn through the mlgym env on one runtime: a session on apartmentRent whose agent made `mb`
 * MiB of files (a model) runs `python train.py` per turn (timed: the turn) and records its state after it
 * (timed: `saveState`, what `resume_rollouts` adds to every turn); each state is then restored once (timed).
 * @example const cost = await snapshotCost("local", 100, "/tmp/run", 5);
 */
export async function snapshotCost(
  runtime: "local" | "docker",
  mb: number,
  runDir: string,
  turns: number,
): Promise<SnapshotCost> {
  const config = mlgymConfigSchema.parse({
    tasks: ["apartmentRent"],
    runtime,
    max_steps: 100,
    command_timeout_s: 300,
    docker: { image: IMAGE, pool_size: 1, memory_mb: 2048, cpus: 1 },
  });
  const env: Environment = await createMlgymEnvironment(config, context(runDir));
  const out: SnapshotCost = { runtime, mb, saveMs: [], turnMs: [], restoreMs: [], bytes: 0, sentBytes: [] };
  try {
    const [example] = await env.examples("train");
    if (!example) throw new Error("no apartmentRent example");
    const signal = new AbortController().signal;
    const session = await env.open(example, { rolloutId: `b-${runtime}-${mb}`, signal });
    try {
      await session.start();
      await session.step({ text: "", command: `head -c ${mb * 1024 * 1024} /dev/urandom > model.bin` });
      for (let i = 0; i < turns; i++) {
        const t0 = performance.now();
        const result = await session.step({ text: "", command: "python train.py" });
        out.turnMs.push(performance.now() - t0);
        if (result.toolError) throw new Error(`python train.py failed: ${result.observation.slice(0, 300)}`);
        const s0 = performance.now();
        const state = await session.saveState!(i + 1);
        out.saveMs.push(performance.now() - s0);
        const snapshot = state.snapshot as { bytes: number; transferredBytes?: number };
        out.bytes = snapshot.bytes;
        if (snapshot.transferredBytes !== undefined) out.sentBytes.push(snapshot.transferredBytes);
        const r0 = performance.now();
        const restored = await env.restore!(example, { rolloutId: `r-${runtime}-${mb}-${i}`, signal, state });
        out.restoreMs.push(performance.now() - r0);
        await restored.close();
      }
      await session.dropState?.();
    } finally {
      await session.close();
    }
  } finally {
    await env.close?.();
  }
  return out;
}

export const median = (list: number[]) => spread(list).median;
