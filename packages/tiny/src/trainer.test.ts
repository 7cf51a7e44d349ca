import { afterAll, expect, test } from "bun:test";
import {
  appendFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeMicroBatches, packSamples, type TrainingSampleWire } from "@air/trainer-prime-rl";
import { startTiny, type TinyProcess } from "./process.ts";
import { TINY_TRAINER_SCRIPT, tinyFiles, writeTinyConfig } from "./scripts.ts";

const root = mkdtempSync(join(tmpdir(), "air-tiny-trainer-"));
const started: TinyProcess[] = [];
afterAll(async () => {
  await Promise.all(started.map((p) => p.stop()));
  rmSync(root, { recursive: true, force: true });
});

/** A trainer on prime-rl 0.9's layout (run dir = output dir); `toml` is appended to its trainer TOML. */
async function trainerIn(
  name: string,
  toml = "",
  maxSteps?: number,
): Promise<{ proc: TinyProcess; runDir: string }> {
  const runDir = join(root, name);
  const file = join(root, `${name}.json`);
  writeTinyConfig(file, { commands: ["a", "b"], run_dir: runDir, poll_ms: 20, max_steps: maxSteps ?? null });
  if (toml) appendFileSync(tinyFiles(file).trainer, toml);
  const proc = await startTiny(TINY_TRAINER_SCRIPT, file, 60_000);
  started.push(proc);
  return { proc, runDir };
}

const SAMPLE: TrainingSampleWire = {
  token_ids: [1, 2, 258, 256],
  mask: [false, false, true, true],
  logprobs: [0, 0, -0.7, 0],
  temperatures: [1, 1, 1, 1],
  env_name: "t",
  ref_logprobs: null,
  rl_weights: null,
  ce_weights: null,
  ref_kl_weights: null,
  advantages: [0, 0, 1, 1],
};

function writeStep(runDir: string, step: number, samples = [SAMPLE]): void {
  const dir = join(runDir, "rollouts", `step_${step}`);
  mkdirSync(dir, { recursive: true });
  const grid = packSamples(samples, { seqLen: 16, dataWorldSize: 1 });
  writeFileSync(join(dir, "rank_0.bin"), encodeMicroBatches(grid[0] ?? []));
}

async function exited(proc: TinyProcess, ms = 60_000): Promise<number | string> {
  return await Promise.race([proc.proc.exited, Bun.sleep(ms).then(() => "hung")]);
}

test("a fresh trainer starts at prime-rl's step 1 and broadcasts the incoming policy as step_0 first", async () => {
  const { proc, runDir } = await trainerIn("fresh");
  expect(proc.ready).toMatchObject({ event: "ready", step: 1, rank: 0, world_size: 1 });
  expect(existsSync(join(runDir, "broadcasts", "step_0", "STABLE"))).toBe(true);
  expect(existsSync(join(runDir, "broadcasts", "step_0", "model.pt"))).toBe(true);
  expect(await proc.stop(30_000)).toBe(0);
}, 90_000);

test("checkpoints every ckpt.interval steps and after the last, keep_last prunes, broadcasts pruned as prime-rl does; [resume] step = k continues at k + 1", async () => {
  const ckpt = "[ckpt]\ninterval = 2\nkeep_last = 1\n";
  const first = await trainerIn("ckpt", ckpt, 3);
  for (const step of [1, 2, 3]) writeStep(first.runDir, step);
  expect(await exited(first.proc)).toBe(0);
  const ckpts = join(first.runDir, "checkpoints");
  expect(existsSync(join(ckpts, "step_1"))).toBe(false); // not on the interval
  expect(existsSync(join(ckpts, "step_2"))).toBe(false); // saved at step 2, pruned by keep_last = 1 after step 3
  expect(existsSync(join(ckpts, "step_3", "trainer", ".metadata"))).toBe(true); // the final checkpoint
  // prime-rl removes broadcasts/step_{N-2} after broadcasting N unless N-2 is on the ckpt interval (0 always is):
  expect(
    ["step_0", "step_1", "step_2", "step_3"].map((s) => existsSync(join(first.runDir, "broadcasts", s))),
  ).toEqual([true, false, true, true]);
  const rows = readFileSync(join(first.runDir, "metrics.jsonl"), "utf8").trim().split("\n");
  expect(rows.map((r) => JSON.parse(r).step)).toEqual([1, 2, 3]);

  rmSync(join(root, "ckpt.json.trainer.toml"));
  rmSync(join(first.runDir, "broadcasts", "step_3"), { recursive: true });
  const resumed = await trainerIn("ckpt", `${ckpt}[resume]\nstep = 3\n`);
  expect(resumed.proc.ready).toMatchObject({ step: 4 });
  // The incoming policy of the resumed step (v3, from the checkpoint) is broadcast before its batch is awaited.
  expect(existsSync(join(resumed.runDir, "broadcasts", "step_3", "STABLE"))).toBe(true);
  expect(await resumed.proc.stop(30_000)).toBe(0);
}, 180_000);

test("a checkpoint is written as DCP writes one (payload, then .metadata); stopped between the two, STABLE is there, the metrics row and .metadata are not, and loading it fails", async () => {
  const runDir = join(root, "partial");
  const file = join(root, "partial.json");
  writeTinyConfig(file, { commands: ["a", "b"], run_dir: runDir, poll_ms: 20 });
  appendFileSync(tinyFiles(file).trainer, "[ckpt]\ninterval = 1\n");
  const proc = await startTiny(TINY_TRAINER_SCRIPT, file, 60_000, {
    AIR_TINY_CKPT_STOP_AT: "2",
    AIR_TINY_CKPT_STOP_HOW: "kill",
  });
  started.push(proc);
  for (const step of [1, 2]) writeStep(runDir, step);
  expect(await exited(proc)).not.toBe("hung");
  expect(proc.proc.signalCode).toBe("SIGKILL");
  const ckpt = (step: number, name: string) => join(runDir, "checkpoints", `step_${step}`, "trainer", name);
  expect([".metadata", "__0_0.distcp"].map((n) => existsSync(ckpt(1, n)))).toEqual([true, true]);
  expect([".metadata", "__0_0.distcp"].map((n) => existsSync(ckpt(2, n)))).toEqual([false, true]);
  expect(existsSync(join(runDir, "broadcasts", "step_2", "STABLE"))).toBe(true); // STABLE before the save
  const rows = readFileSync(join(runDir, "metrics.jsonl"), "utf8").trim().split("\n");
  expect(rows.map((r) => JSON.parse(r).step)).toEqual([1]); // the row after the save

  rmSync(tinyFiles(file).trainer);
  writeTinyConfig(file, { commands: ["a", "b"], run_dir: runDir, poll_ms: 20 });
  appendFileSync(tinyFiles(file).trainer, "[ckpt]\ninterval = 1\n[resume]\nstep = 2\n");
  const load = Bun.spawn(["/usr/bin/python3", TINY_TRAINER_SCRIPT, "@", tinyFiles(file).trainer], {
    stderr: "pipe",
  });
  expect(await Promise.race([load.exited, Bun.sleep(60_000).then(() => "hung")])).toBe(1);
  expect(await new Response(load.stderr).text()).toContain(
    `No such file or directory: '${ckpt(2, ".metadata")}'`,
  );
}, 90_000);

test("is_masked is prime-rl's mean of per-sample fractions, not a per-token mean", async () => {
  const { proc, runDir } = await trainerIn("masked", "", 1);
  // A > 0: a token is masked when p - p_inference > 0.2; A <= 0: when p - p_inference < -0.2. EOS after a command is
  // forced (p = 1); a command's p is near 1/3 (three outputs, fresh weights). Inference logprob 0: p_inference = 1.
  const sample = (ids: number[], mask: boolean[], logprobs: number[], advantage: number) => ({
    ...SAMPLE,
    token_ids: ids,
    mask,
    logprobs,
    temperatures: ids.map(() => 1),
    advantages: ids.map(() => advantage),
  });
  writeStep(runDir, 1, [
    sample([1, 2, 258, 256], [false, false, true, true], [0, 0, 0, -10], 1), // EOS masked: 1 of 2
    sample([3, 259, 256], [false, true, true], [0, 0, 0], 1), // 0 of 2
    sample([4, 5, 258, 256], [false, false, true, false], [0, 0, 0, 0], -1), // the command masked: 1 of 1
  ]);
  expect(await exited(proc)).toBe(0);
  const row = JSON.parse(readFileSync(join(runDir, "metrics.jsonl"), "utf8").trim());
  expect(row["progress/trainable_tokens"]).toBe(5);
  expect(row["is_masked/mean"]).toBeCloseTo((1 / 2 + 0 + 1) / 3, 12); // per token it would be 2 / 5
  expect(row["is_masked/max"]).toBe(1);
}, 90_000);

test("a resumed trainer broadcasts its start step again by renames: no file in a dir with STABLE is rewritten in place", async () => {
  const runDir = join(root, "rebroadcast");
  const file = join(root, "rebroadcast.json");
  const config = { commands: ["a", "b"], run_dir: runDir, poll_ms: 20, lora: { rank: 4, alpha: 8 } };
  writeTinyConfig(file, { ...config, max_steps: 1 });
  appendFileSync(tinyFiles(file).trainer, "[ckpt]\ninterval = 1\n");
  const first = await startTiny(TINY_TRAINER_SCRIPT, file, 60_000);
  started.push(first);
  writeStep(runDir, 1);
  expect(await exited(first)).toBe(0);
  const step1 = join(runDir, "broadcasts", "step_1");
  const names = ["adapter_config.json", "adapter_model.safetensors", "STABLE"];
  // a reader's view of the finished broadcast (as a hard link keeps it)
  for (const name of names) linkSync(join(step1, name), join(root, `rebroadcast-${name}`));
  rmSync(tinyFiles(file).trainer);
  writeTinyConfig(file, config);
  appendFileSync(tinyFiles(file).trainer, "[ckpt]\ninterval = 1\n[resume]\nstep = 1\n");
  const resumed = await startTiny(TINY_TRAINER_SCRIPT, file, 60_000);
  started.push(resumed);
  expect(resumed.ready).toMatchObject({ step: 2 }); // step_1 was broadcast again before "ready"
  for (const name of names) {
    expect(statSync(join(step1, name)).ino).not.toBe(statSync(join(root, `rebroadcast-${name}`)).ino);
    expect(statSync(join(root, `rebroadcast-${name}`)).nlink).toBe(1); // the old file, whole and unlinked there
  }
  expect(readdirSync(step1).sort()).toEqual([...names].sort());
  expect(await resumed.stop(30_000)).toBe(0);
}, 120_000);

test("[resume] step = k without that checkpoint fails as prime-rl's does (FileNotFoundError naming the path)", async () => {
  const file = join(root, "missing.json");
  writeTinyConfig(file, { commands: ["a", "b"], run_dir: join(root, "missing"), poll_ms: 20 });
  appendFileSync(tinyFiles(file).trainer, "[resume]\nstep = 4\n");
  const proc = Bun.spawn(["/usr/bin/python3", TINY_TRAINER_SCRIPT, "@", tinyFiles(file).trainer], {
    stderr: "pipe",
  });
  expect(await Promise.race([proc.exited, Bun.sleep(60_000).then(() => "hung")])).toBe(1);
  expect(await new Response(proc.stderr).text()).toContain(
    `FileNotFoundError: Checkpoint not found at ${join(root, "missing", "checkpoints", "step_4", "trainer")}`,
  );
}, 90_000);

test("a token outside the vocabulary stops the trainer with a message", async () => {
  const { proc, runDir } = await trainerIn("vocab");
  writeStep(runDir, 1, [{ ...SAMPLE, token_ids: [1, 2, 999, 256] }]);
  const code = await exited(proc, 30_000);
  expect(code).not.toBe(0);
  expect(code).not.toBe("hung");
  expect(await new Response(proc.proc.stderr).text()).toContain(
    "token id 999 is outside this model's vocabulary",
  );
}, 90_000);
