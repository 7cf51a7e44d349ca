import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig, parseOverrides } from "@air/core";
import {
  primeRlPaths as paths,
  primeRlTrainerContext,
  primeRlTrainerToml as trainerToml,
} from "@air/trainer-prime-rl";
import { builtinRegistry } from "./builtins.ts";
import { processContext } from "./process-kinds.ts";
import { planOf } from "./run-plan.ts";
import { LAUNCHER_SECTIONS, type RunConfig } from "./sections.ts";
import { removeTempDirs, writeFixtureConfig } from "./test-helpers.ts";
import { prepareTrainerRunDir } from "./trainer-run.ts";

type Config = Parameters<typeof processContext>[0];
const primeRlPaths = (c: Config) => paths(processContext(c));
const primeRlTrainerToml = (c: Config, o?: { resumeStep?: number }) =>
  trainerToml(primeRlTrainerContext(processContext(c)), o);

afterAll(removeTempDirs);

/** What supervise does before it starts the trainer: the plugin's hook on the run's plan. */
function prepare(config: RunConfig, startStep: number, resume: boolean) {
  const plan = planOf(config);
  return prepareTrainerRunDir(plan.config.plugins.trainer, plan.trainer, {
    ...plan.launch,
    startStep,
    resume,
  });
}

async function load(overrides: string[] = [], withTrainer = true): Promise<RunConfig> {
  const fx = await writeFixtureConfig({ extra: '[trainer]\nplugin = "prime-rl"\n', withTrainer });
  return loadConfig(fx.file, {
    registry: builtinRegistry(),
    overrides: parseOverrides(overrides),
    extraSections: LAUNCHER_SECTIONS,
  });
}

function dirty(runDir: string) {
  for (const s of [1, 2, 3]) {
    mkdirSync(join(runDir, "rollouts", `step_${s}`), { recursive: true });
    mkdirSync(join(runDir, "broadcasts", `step_${s}`), { recursive: true });
  }
  writeFileSync(join(runDir, "metrics.jsonl"), "{}\n");
  // Air steps 0..2 sent prime-rl steps 1..3.
  writeFileSync(join(runDir, "air-steps.json"), JSON.stringify({ 0: 1, 1: 2, 2: 3 }));
}

test("a fresh start removes the previous run's steps and metrics, as prime-rl's rl does", async () => {
  const config = await load();
  const { runDir } = primeRlPaths(config);
  dirty(runDir);
  const prepared = prepare(config, 0, false);
  expect(prepared.trainerStep).toBeUndefined();
  expect(readdirSync(join(runDir, "rollouts"))).toEqual([]);
  expect(existsSync(join(runDir, "metrics.jsonl"))).toBe(false);
  // the previous run's final weights are not named as this run's
  mkdirSync(join(config.runDir, "final-weights"), { recursive: true });
  writeFileSync(join(config.runDir, "final-weights.json"), "{}");
  // nor the weights an earlier --resume set aside
  mkdirSync(join(runDir, "resume-weights", "step_2"), { recursive: true });
  prepare(config, 0, false);
  expect(existsSync(join(config.runDir, "final-weights"))).toBe(false);
  expect(existsSync(join(config.runDir, "final-weights.json"))).toBe(false);
  expect(existsSync(join(runDir, "resume-weights"))).toBe(false);
});

test("a resume keeps the steps up to the resume point and tells the trainer where to resume", async () => {
  const config = await load();
  const { runDir } = primeRlPaths(config);
  dirty(runDir);
  // Resume at air step 2 (steps 0 and 1 done): prime-rl step 2 is the last kept.
  const prepared = prepare(config, 2, true);
  expect(prepared.trainerStep).toBe(2);
  expect(readdirSync(join(runDir, "broadcasts")).sort()).toEqual(["step_1", "step_2"]);
  expect(existsSync(join(runDir, "metrics.jsonl"))).toBe(true);
});

test("nothing is touched when the launcher starts no trainer", async () => {
  const config = await load([], false);
  const { runDir } = primeRlPaths(config);
  dirty(runDir);
  expect(prepare(config, 0, false).removed).toEqual([]);
  expect(readdirSync(join(runDir, "rollouts")).length).toBe(3);
});

/** A checkpoint as DCP leaves a finished save: `checkpoints/step_N/trainer/.metadata` written last. */
function completeCheckpoint(outputDir: string, step: number): void {
  mkdirSync(join(outputDir, "checkpoints", `step_${step}`, "trainer"), { recursive: true });
  writeFileSync(join(outputDir, "checkpoints", `step_${step}`, "trainer", ".metadata"), "");
}

test("a resume loads the newest checkpoint at or before the resume point; later checkpoints go", async () => {
  const config = await load(["--trainer_process.ckpt_interval=1"]);
  const { runDir, outputDir } = primeRlPaths(config);
  dirty(runDir);
  for (const s of [1, 3]) completeCheckpoint(outputDir, s);
  // a save that never finished (no .metadata) is no resume point, and goes
  mkdirSync(join(outputDir, "checkpoints", "step_2", "trainer"), { recursive: true });
  // Resume at air step 2: prime-rl step 2 has no checkpoint; 1 has, and its batch 2 is still on disk.
  writeFileSync(join(runDir, "metrics.jsonl"), [1, 2, 3].map((step) => `{"step": ${step}}\n`).join(""));
  const prepared = prepare(config, 2, true);
  expect(prepared).toMatchObject({ trainerStep: 2, resumeStep: 1 });
  // steps 2 (behind checkpoint 1) and 3 (the trainer ran ahead before it died) are trained again: their rows go,
  // so each step's row is written once
  expect(readFileSync(join(runDir, "metrics.jsonl"), "utf8")).toBe('{"step": 1}\n');
  expect(readdirSync(join(outputDir, "checkpoints"))).toEqual(["step_1"]);
  expect(readdirSync(join(runDir, "rollouts")).sort()).toEqual(["step_1", "step_2"]);
  const toml = await primeRlTrainerToml(config, { resumeStep: prepared.resumeStep });
  expect(toml).toContain("[resume]\nstep = 1");
  expect(toml).toMatch(/\[ckpt\]\ninterval = 1\nkeep_last = 2/);
});

test("over ZMQ a resume behind its checkpoint is refused (no batch to train again)", async () => {
  const config = await load(["--trainer.transport=zmq"]);
  dirty(primeRlPaths(config).runDir);
  expect(() => prepare(config, 2, true)).toThrow(/newest trainer checkpoint at or before it is none/);
});

test("a worker node (node_rank > 0) never cleans the shared output dir", async () => {
  const config = await load(["--trainer_process.nnodes=2", "--trainer_process.node_rank=1"]);
  const { runDir } = primeRlPaths(config);
  dirty(runDir);
  expect(prepare(config, 0, false).removed).toEqual([]);
  // on --resume it gives its ranks the same checkpoint as the master's, still removing nothing
  completeCheckpoint(runDir, 2);
  expect(prepare(config, 2, true)).toEqual({ trainerStep: 2, resumeStep: 2, removed: [] });
  expect(readdirSync(join(runDir, "rollouts")).length).toBe(3);
  expect(existsSync(join(runDir, "metrics.jsonl"))).toBe(true);
  expect(existsSync(join(runDir, "air-steps.json"))).toBe(true);
});
