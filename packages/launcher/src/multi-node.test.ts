import { afterAll, afterEach, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RUN_FILES, readPidFile } from "./rundir.ts";
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

async function waitForFile(file: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`${file} did not appear within ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

test("two launchers as trainer nodes 0 and 1 on one output dir: a late worker keeps the master's files", async () => {
  const fx = await writeFixtureConfig({ extra: '[trainer]\nplugin = "prime-rl"\n' });
  const nodes = (rank: number) => [
    fx.file,
    "--trainer_process.nnodes=2",
    `--trainer_process.node_rank=${rank}`,
    "--trainer_process.master_addr=127.0.0.1",
  ];
  const args = join(fx.dir, "torchrun-args.txt");
  const master = startLauncher(nodes(0), { cwd: fx.dir, env: { FAKE_ARGS_FILE: args }, timeoutMs: 120_000 });
  cleanup.push({ run: master, dir: fx.runDir });
  // The master's orchestrator sent step 1 (rank_0.bin + air's step map) and waits for its weights; the trainer
  // logged a metrics row (written here: the fake torchrun trains nothing).
  const prime = join(fx.runDir, "prime-rl");
  await waitForFile(join(prime, "rollouts", "step_1", "rank_0.bin"));
  await waitForFile(join(prime, "air-steps.json"));
  writeFileSync(join(prime, "metrics.jsonl"), '{"step": 1, "loss/mean": 0.5}\n');
  const masterPid = readPidFile(fx.runDir)?.launcher.pid;
  expect(masterPid).toBe(master.child.pid);

  const worker = startLauncher(nodes(1), { cwd: fx.dir, env: { FAKE_ARGS_FILE: args }, timeoutMs: 120_000 });
  const workerDir = join(fx.runDir, "nodes", "node_1");
  cleanup.push({ run: worker, dir: workerDir });
  await worker.waitFor(/trainer worker node/);
  await worker.waitFor(/trainer running/);
  await waitForText(args, "--node-rank=1");

  // Nothing of the master's was removed or overwritten.
  expect(existsSync(join(prime, "rollouts", "step_1", "rank_0.bin"))).toBe(true);
  expect(JSON.parse(readFileSync(join(prime, "air-steps.json"), "utf8"))).toEqual({ 0: 1 });
  expect(readFileSync(join(prime, "metrics.jsonl"), "utf8")).toContain('"step": 1');
  expect(readPidFile(fx.runDir)?.launcher.pid).toBe(masterPid);
  expect(readPidFile(workerDir)?.launcher.pid).toBe(worker.child.pid);
  expect(readFileSync(join(workerDir, "logs", "trainer.log"), "utf8")).toContain("--node-rank=1");
  expect(readFileSync(join(fx.runDir, "logs", "trainer.log"), "utf8")).not.toContain("--node-rank=1");
  // Both trainer nodes meet at the master's address.
  const lines = readFileSync(args, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("--role=trainer"));
  expect(lines.length).toBe(2); // the inference server (fake vllm) started on the master only
  for (const line of lines) expect(line).toContain("--nnodes=2");
  for (const line of lines) expect(line).toContain("--rdzv-endpoint=127.0.0.1:");

  worker.child.kill("SIGINT");
  expect(await worker.done).toBe(130);
  expect(existsSync(join(workerDir, RUN_FILES.pid))).toBe(false);
  expect(readPidFile(fx.runDir)?.launcher.pid).toBe(masterPid);
  expect(existsSync(join(prime, "rollouts", "step_1", "rank_0.bin"))).toBe(true);
  master.child.kill("SIGINT");
  expect(await master.done).toBe(130);
  expect(survivors(worker, workerDir)).toEqual([]);
  expect(survivors(master, fx.runDir)).toEqual([]);
}, 180_000);
