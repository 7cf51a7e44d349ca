import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@air/core/testing";
import {
  encodeMicroBatches,
  encodeTrainingBatch,
  packSamples,
  type TrainingSampleWire,
} from "@air/trainer-prime-rl";
import { startTiny, type TinyProcess } from "./process.ts";
import { TINY_TRAINER_SCRIPT, writeTinyConfig } from "./scripts.ts";

// The tiny trainer reads both prime-rl formats air writes: 0.8's TrainingBatch and 0.9's packed MicroBatch lists
// (one file per data rank, each read by its own rank). The same samples must give the same step-1 loss either way:
// two ranks dividing by the all-reduced token count and summing gradients take the step one process would. The
// logged loss/mean is prime-rl's: the mean over all ranks' micro-batches of each one's scaled loss, i.e. the batch
// loss ÷ the number of micro-batches on all ranks (one process over the 0.8 file: one micro-batch, the batch loss).
const root = mkdtempSync(join(tmpdir(), "air-tiny-formats-"));
const started: TinyProcess[] = [];
afterAll(async () => {
  await Promise.all(started.map((p) => p.stop()));
  rmSync(root, { recursive: true, force: true });
});

function sample(prompt: number[], completion: number[], advantage: number): TrainingSampleWire {
  const n = prompt.length + completion.length;
  const mask = [...prompt.map(() => false), ...completion.map(() => true)];
  return {
    token_ids: [...prompt, ...completion],
    mask,
    logprobs: mask.map((m, i) => (m ? -1 - i / 10 : 0)),
    temperatures: new Array<number>(n).fill(1),
    env_name: "t",
    ref_logprobs: null,
    rl_weights: null,
    ce_weights: null,
    ref_kl_weights: null,
    advantages: mask.map((m) => (m ? advantage : 0)),
  };
}
const samples = [
  sample([1, 2, 3], [258, 256], 1),
  sample([2], [259, 258, 256], -1),
  sample([3, 4], [259], 0.5),
];

/** Trains step 1 with `ranks` trainer processes, each given the environment torchrun gives a rank. */
async function stepMetrics(
  name: string,
  version: "0.8" | "0.9",
  ranks: number,
  write: (stepDir: string) => void,
  lora: { rank: number; alpha: number } | null = null,
): Promise<Record<string, number>> {
  const runDir = join(root, name, version === "0.8" ? "run_default" : "");
  const metricsFile = join(root, `${name}.jsonl`);
  writeTinyConfig(join(root, `${name}.json`), {
    commands: ["a", "b"],
    run_dir: runDir,
    metrics_file: metricsFile,
    poll_ms: 20,
    max_steps: 1,
    prime_rl_version: version,
    lora,
  });
  const port = String(await freePort());
  const rankEnv = (r: number) => ({
    RANK: String(r),
    LOCAL_RANK: String(r),
    WORLD_SIZE: String(ranks),
    MASTER_ADDR: "127.0.0.1",
    MASTER_PORT: port,
  });
  const procs = await Promise.all(
    Array.from({ length: ranks }, (_, r) =>
      startTiny(TINY_TRAINER_SCRIPT, join(root, `${name}.json`), 60_000, rankEnv(r)),
    ),
  );
  started.push(...procs);
  const stepDir = join(runDir, "rollouts", "step_1");
  mkdirSync(stepDir, { recursive: true });
  write(stepDir);
  for (const proc of procs) {
    const code = await Promise.race([proc.proc.exited, Bun.sleep(60_000).then(() => "hung")]);
    if (code !== 0)
      throw new Error(`tiny trainer exited ${code}: ${await new Response(proc.proc.stderr).text()}`);
  }
  expect(existsSync(join(runDir, "broadcasts", "step_1", "STABLE"))).toBe(true);
  return JSON.parse(readFileSync(metricsFile, "utf8").trim().split("\n")[0] ?? "{}") as Record<
    string,
    number
  >;
}

test("0.8 TrainingBatch (one process) and 0.9 MicroBatch files (two gloo ranks, each reading its own rank_R.bin) train the same step; the 2-rank loss/mean is the batch loss ÷ micro-batches on all ranks", async () => {
  const v08 = await stepMetrics("v08", "0.8", 1, (dir) =>
    writeFileSync(
      join(dir, "train_rollouts.bin"),
      encodeTrainingBatch({ examples: samples, step: 1, run_idx: null }),
    ),
  );
  let microBatches = 0;
  const v09 = await stepMetrics("v09", "0.9", 2, (dir) => {
    // Highest rank first, as the plugin writes them: rank_0.bin appearing means the step is complete.
    const grid = packSamples(samples, { seqLen: 6, dataWorldSize: 2, padToMultipleOf: 4 });
    microBatches = grid.flat().length;
    expect(microBatches).toBeGreaterThan(2);
    for (let r = grid.length - 1; r >= 0; r--)
      writeFileSync(join(dir, `rank_${r}.bin`), encodeMicroBatches(grid[r] ?? []));
  });
  expect(v09["progress/trainable_tokens"]).toBe(6);
  expect(v09["progress/trainable_tokens"]).toBe(v08["progress/trainable_tokens"] ?? -1);
  expect(v08["loss/mean"]).not.toBe(0);
  expect((v09["loss/mean"] ?? Number.NaN) * microBatches).toBeCloseTo(v08["loss/mean"] ?? Number.NaN, 12);
  expect(v09["optim/grad_norm"]).toBeCloseTo(v08["optim/grad_norm"] ?? Number.NaN, 12);
}, 180_000);

test("LoRA: two gloo ranks (gradients of the adapter only all-reduced) take the step one process would", async () => {
  const lora = { rank: 4, alpha: 8 };
  const microBatches: Record<number, number> = {};
  const files = (ranks: number) => (dir: string) => {
    const grid = packSamples(samples, { seqLen: 6, dataWorldSize: ranks, padToMultipleOf: 4 });
    microBatches[ranks] = grid.flat().length;
    for (let r = grid.length - 1; r >= 0; r--)
      writeFileSync(join(dir, `rank_${r}.bin`), encodeMicroBatches(grid[r] ?? []));
  };
  const one = await stepMetrics("lora1", "0.9", 1, files(1), lora);
  const two = await stepMetrics("lora2", "0.9", 2, files(2), lora);
  expect(one["optim/grad_norm"]).toBeGreaterThan(0);
  const batchLoss = (m: Record<string, number>, ranks: number) =>
    (m["loss/mean"] ?? Number.NaN) * (microBatches[ranks] ?? Number.NaN);
  expect(batchLoss(two, 2)).toBeCloseTo(batchLoss(one, 1), 12);
  expect(two["optim/grad_norm"]).toBeCloseTo(one["optim/grad_norm"] ?? Number.NaN, 12);
  for (const name of ["lora1", "lora2"])
    expect(existsSync(join(root, name, "broadcasts", "step_1", "adapter_config.json"))).toBe(true);
}, 180_000);

test("a malformed rank file stops the trainer with a message naming the step dir", async () => {
  const runDir = join(root, "bad");
  writeTinyConfig(join(root, "bad.json"), { commands: ["a", "b"], run_dir: runDir, poll_ms: 20 });
  const proc = await startTiny(TINY_TRAINER_SCRIPT, join(root, "bad.json"));
  started.push(proc);
  mkdirSync(join(runDir, "rollouts", "step_1"), { recursive: true });
  writeFileSync(
    join(runDir, "rollouts", "step_1", "rank_0.bin"),
    new Uint8Array([0x91, 0x93, 0x90, 0x90, 0x90]),
  );
  // the trainer imports torch before it reads the file: seconds idle, a minute on a busy machine
  const code = await Promise.race([proc.proc.exited, Bun.sleep(120_000).then(() => "hung")]);
  expect(code).not.toBe(0);
  expect(code).not.toBe("hung");
  expect(await new Response(proc.proc.stderr).text()).toContain(
    "rank 0: cannot read step 1: not a prime-rl batch",
  );
}, 180_000);
