import { afterAll, afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { listRuns, openStore, STALE_MS, tables } from "@air/logger-sqlite";
import { readLastCompletedStep } from "./rundir.ts";
import {
  killSurvivors,
  type LauncherRun,
  type RunFixture,
  removeTempDirs,
  startLauncher,
  writeFixtureConfig,
} from "./test-helpers.ts";

afterAll(removeTempDirs);
let current: { run?: LauncherRun; fx?: RunFixture } = {};
afterEach(() => {
  if (current.fx) killSurvivors(current.run, current.fx.runDir);
  current = {};
});

/** Trajectory count per step of the store's only run. */
function trajectoriesPerStep(dbPath: string): Map<number, number> {
  const db = openStore(dbPath, { readonly: true });
  try {
    const counts = new Map<number, number>();
    for (const t of db.select({ step: tables.trajectories.step }).from(tables.trajectories).all())
      counts.set(t.step, (counts.get(t.step) ?? 0) + 1);
    return counts;
  } finally {
    db.$client.close();
  }
}

test("kill -9 of the launcher mid-run, then --resume: the store keeps one run, dead in between, no step doubled", async () => {
  const fx = await writeFixtureConfig({
    maxSteps: 200,
    withTrainer: false,
    policyDelayMs: 150,
    loggers: '[{ plugin = "sqlite", flush_ms = 10, heartbeat_ms = 100 }]',
  });
  const dbPath = join(fx.runDir, "air.db");
  const first = startLauncher([fx.file]);
  current = { run: first, fx };
  // generous: the launcher's start and two steps take seconds idle, much longer on a busy 2-core machine
  const deadline = Date.now() + 120_000;
  while ((readLastCompletedStep(fx.runDir) ?? -1) < 1) {
    if (Date.now() > deadline) throw new Error(`no 2 steps in 120 s:\n${first.stderr()}`);
    await Bun.sleep(25);
  }
  await Bun.sleep(200); // into the next step: some of its rollouts are stored, the step is not finished
  first.child.kill("SIGKILL");
  await first.done;
  const lastDone = readLastCompletedStep(fx.runDir)!;

  const killed = openStore(dbPath, { readonly: true });
  try {
    const [run] = listRuns(killed, Date.now() + STALE_MS + 1000);
    expect(run!.status).toBe("running");
    expect(run!.state).toBe("dead");
  } finally {
    killed.$client.close();
  }

  const maxSteps = lastDone + 3;
  const again = startLauncher([fx.file, "--run.max_steps", String(maxSteps), "--resume"]);
  current.run = again;
  expect(await again.done).toBe(0);

  const db = openStore(dbPath, { readonly: true });
  try {
    const runs = listRuns(db);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "completed", state: "completed", resumes: 1 });
    const steps = db.select().from(tables.steps).all();
    expect(steps.map((s) => s.step).sort((a, b) => a - b)).toEqual(
      Array.from({ length: maxSteps }, (_, i) => i),
    );
  } finally {
    db.$client.close();
  }
  // batch_size 2: every step holds exactly 2 trajectories (the killed step's partial ones were dropped).
  const counts = trajectoriesPerStep(dbPath);
  expect([...counts.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: maxSteps }, (_, i) => i));
  for (const n of counts.values()) expect(n).toBe(2);
}, 300_000);
