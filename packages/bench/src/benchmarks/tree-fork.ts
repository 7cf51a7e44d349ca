import { resolve } from "node:path";
import type { Environment, EnvSession, PluginContext } from "@air/core";
import { createMlgymEnvironment, mlgymConfigSchema } from "@air/env-mlgym";
import Docker from "dockerode";
import { spread } from "../stats.ts";

const REPO = resolve(import.meta.dir, "../../../..");
const IMAGE = process.env.AIR_TEST_IMAGE ?? "air-mlgym-test:latest";

/** One runtime's fork cost: fork(), a warm open (pooled / staged sandbox) and a cold open, in ms. */
export interface ForkCost {
  runtime: "local" | "docker";
  forkMs: number[];
  warmOpenMs: number[];
  coldOpenMs: number[];
  /** Size of the workspace tar a fork carried, bytes. */
  snapshotBytes: number;
}

function context(runDir: string): PluginContext {
  const log = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
  return {
    log,
    runDir,
    configDir: REPO,
    runName: "bench-tree-fork",
    seed: 0,
    modelName: "bench",
    signal: new AbortController().signal,
    emit: () => {},
  };
}

async function env(runtime: "local" | "docker", runDir: string, warm: boolean): Promise<Environment> {
  const config = mlgymConfigSchema.parse({
    tasks: ["apartmentRent"],
    runtime,
    max_steps: 20,
    command_timeout_s: 60,
    docker: { image: IMAGE, pool_size: warm ? 4 : 0, memory_mb: 2048, cpus: 1 },
    local: { stage_next: warm },
  });
  return createMlgymEnvironment(config, context(runDir));
}

async function timed<T>(work: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const value = await work();
  return [performance.now() - t0, value];
}

/** Whether docker and the test image are there (the fork cost on docker needs both). */
export async function dockerReady(): Promise<boolean> {
  try {
    await new Docker().getImage(IMAGE).inspect();
    return true;
  } catch (error) {
    process.stderr.write(`[tree] no docker fork cost: ${error instanceof Error ? error.message : error}\n`);
    return false;
  }
}

/**
 * Fork cost on one runtime: each repetition opens a session (timed: a warm open), trains a model in it (so the
 * workspace holds what a real episode leaves), forks it (timed) and checks the fork sees the model; a second env
 * with pooling/staging off times cold opens alongside.
 * @example const cost = await forkCost("local", "/tmp/run", 5);
 */
export async function forkCost(runtime: "local" | "docker", runDir: string, reps: number): Promise<ForkCost> {
  const warm = await env(runtime, `${runDir}/warm`, true);
  const cold = await env(runtime, `${runDir}/cold`, false);
  const info = (id: string) => ({ rolloutId: id, signal: new AbortController().signal });
  const out: ForkCost = { runtime, forkMs: [], warmOpenMs: [], coldOpenMs: [], snapshotBytes: 0 };
  try {
    const [example] = await warm.examples("train");
    if (!example) throw new Error("no apartmentRent example");
    await (await warm.open(example, info("prime"))).close();
    for (let i = 0; i < reps; i++) {
      await Bun.sleep(200);
      const [openMs, session] = await timed(() => warm.open(example, info(`w${i}`)));
      out.warmOpenMs.push(openMs);
      let fork: EnvSession | undefined;
      try {
        await session.start();
        await session.step({ text: "", command: "python train.py --model forest" });
        const [forkMs, made] = await timed(() => (session.fork as () => Promise<EnvSession>)());
        fork = made;
        out.forkMs.push(forkMs);
        const ls = await fork.step({ text: "", command: "ls" });
        if (!ls.observation.includes("submission.csv"))
          throw new Error(`the fork lost the workspace: ${ls.observation}`);
        if (i === 0 && "snapshot" in session && typeof session.snapshot === "function") {
          const snap = (await session.snapshot()) as { workspace: Uint8Array };
          out.snapshotBytes = snap.workspace.byteLength;
        }
      } finally {
        await fork?.close();
        await session.close();
      }
      const [coldMs, fresh] = await timed(() => cold.open(example, info(`c${i}`)));
      out.coldOpenMs.push(coldMs);
      await fresh.close();
    }
  } finally {
    await warm.close?.();
    await cold.close?.();
  }
  return out;
}

/** Median fork ÷ median open. */
export function forkRatio(cost: ForkCost, open: "warm" | "cold"): number {
  const denominator = spread(open === "warm" ? cost.warmOpenMs : cost.coldOpenMs).median;
  return spread(cost.forkMs).median / denominator;
}
