import { afterAll, afterEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  killSurvivors,
  type LauncherRun,
  removeTempDirs,
  startLauncher,
  survivors,
  waitForText,
  writeFixtureConfig,
} from "./test-helpers.ts";

afterAll(removeTempDirs);

let cleanup: Array<{ run: LauncherRun; dir: string }> = [];
afterEach(() => {
  for (const { run, dir } of cleanup) killSurvivors(run, dir);
  cleanup = [];
});

/** What a run that finished air steps 0 and 1 (prime-rl steps 1, 2) left, with a checkpoint of step 2. */
function finishedTwoSteps(runDir: string): void {
  const prime = join(runDir, "prime-rl");
  mkdirSync(prime, { recursive: true });
  writeFileSync(
    join(runDir, "progress.json"),
    JSON.stringify({ lastCompletedStep: 1, updatedAt: new Date().toISOString(), metrics: {} }),
  );
  writeFileSync(join(prime, "air-steps.json"), JSON.stringify({ 0: 1, 1: 2 }));
  for (const step of [1, 2]) {
    mkdirSync(join(prime, "rollouts", `step_${step}`), { recursive: true });
    writeFileSync(join(prime, "rollouts", `step_${step}`, "rank_0.bin"), "");
    mkdirSync(join(prime, "broadcasts", `step_${step}`), { recursive: true });
    writeFileSync(join(prime, "broadcasts", `step_${step}`, "STABLE"), "");
  }
  const ckpt = join(prime, "checkpoints", "step_2", "trainer");
  mkdirSync(ckpt, { recursive: true });
  writeFileSync(join(ckpt, "__0_0.distcp"), "payload");
  writeFileSync(join(ckpt, ".metadata"), "written last, as DCP does");
  writeFileSync(join(prime, "metrics.jsonl"), '{"step": 1}\n{"step": 2}\n');
}

test("nodes 0 and 1 on one output dir: the trainer TOML is written once, whole (tmp + rename), by the master; a worker without --resume keeps its resume step", async () => {
  const fx = await writeFixtureConfig({
    extra: '[trainer]\nplugin = "prime-rl"\n',
    generatedTrainerToml: true,
    maxSteps: 4,
  });
  const node = (rank: number, ...more: string[]) => [
    fx.file,
    "--trainer_process.nnodes=2",
    `--trainer_process.node_rank=${rank}`,
    "--trainer_process.master_addr=127.0.0.1",
    "--trainer_process.ckpt_interval=1",
    ...more,
  ];
  const args = join(fx.dir, "torchrun-args.txt");
  finishedTwoSteps(fx.runDir);
  // A previous run's copy: a truncate-and-write would keep its inode; a rename replaces it.
  const toml = join(fx.runDir, "configs", "trainer.toml");
  mkdirSync(join(fx.runDir, "configs"), { recursive: true });
  writeFileSync(toml, '# the previous run\n[model]\nname = "old"\n');
  const stale = statSync(toml).ino;

  const master = startLauncher(node(0, "--resume"), {
    cwd: fx.dir,
    env: { FAKE_ARGS_FILE: args },
    timeoutMs: 120_000,
  });
  cleanup.push({ run: master, dir: fx.runDir });
  await master.waitFor(/trainer running/);
  const written = readFileSync(toml, "utf8");
  const inode = statSync(toml).ino;
  expect(inode).not.toBe(stale);
  expect(written).toContain("[resume]\nstep = 2");
  expect(readdirSync(join(fx.runDir, "configs")).filter((f) => f.endsWith(".tmp"))).toEqual([]);

  const worker = startLauncher(node(1), { cwd: fx.dir, env: { FAKE_ARGS_FILE: args }, timeoutMs: 120_000 });
  const workerDir = join(fx.runDir, "nodes", "node_1");
  cleanup.push({ run: worker, dir: workerDir });
  await worker.waitFor(/trainer running/);
  await waitForText(args, "--node-rank=1");
  // The worker's ranks read the master's file: same path, same inode, same resume step.
  expect(statSync(toml).ino).toBe(inode);
  expect(readFileSync(toml, "utf8")).toBe(written);
  const workerLine = readFileSync(args, "utf8")
    .split("\n")
    .find((l) => l.includes("--node-rank=1"));
  expect(workerLine).toContain(`@ ${toml}`);
  expect(existsSync(join(workerDir, "configs"))).toBe(false);

  worker.child.kill("SIGINT");
  expect(await worker.done).toBe(130);
  master.child.kill("SIGINT");
  expect(await master.done).toBe(130);
  expect(survivors(worker, workerDir)).toEqual([]);
  expect(survivors(master, fx.runDir)).toEqual([]);
}, 180_000);
