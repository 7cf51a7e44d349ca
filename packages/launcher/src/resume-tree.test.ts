import { afterEach, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openStore, readRecordedRollouts, readTrajectory, tables } from "@air/logger-sqlite";
import { eq } from "drizzle-orm";
import { readLastCompletedStep } from "./rundir.ts";
import {
  freePort,
  killEverything,
  killSurvivorsAfterEach,
  REPO_ROOT,
  removeTempDirs,
  startLauncher,
  survivors,
  tempDir,
} from "./test-helpers.ts";
import { countRows, trainedSteps, turnFacts } from "./test-resume-kit.ts";

afterEach(removeTempDirs);

const CONFIG = join(REPO_ROOT, "configs", "quickstart.toml");
const runs = killSurvivorsAfterEach();

/**
 * Children of a tree (a parent link) of an unfinished step with 1 or 2 of their 3 turns recorded and the env not
 * done at the last: in flight at a kill (a finished node stays 'running' in the store until its whole tree ends).
 */
const CHILDREN_IN_FLIGHT = `SELECT count(*) AS n FROM trajectories t WHERE t.status = 'running' AND t.split = 'train'
  AND t.parent_json IS NOT NULL
  AND t.step > coalesce((SELECT max(step) FROM steps WHERE ended_at IS NOT NULL), -1)
  AND (SELECT count(*) FROM turn_resume r WHERE r.rollout_id = t.rollout_id) BETWEEN 1 AND 2
  AND (SELECT json_extract(r.point_json, '$.done') FROM turn_resume r WHERE r.rollout_id = t.rollout_id
       ORDER BY r.idx DESC LIMIT 1) = 0`;

test("tree run (mlgym local): kill -9 of everything mid-tree, then --resume: recorded nodes kept, in-flight nodes continue, a lost snapshot starts over from its parent's branch point", async () => {
  const out = tempDir("tree-resume");
  const runDir = join(out, "quickstart");
  const dbPath = join(runDir, "air.db");
  const port = await freePort();
  const maxSteps = 3;
  // per example: 2 roots fork after turn 0 into 2 children each (4 leaves = rollouts_per_example), 4 turns a path
  const args = [
    CONFIG,
    `--run.max_steps=${maxSteps}`,
    `--run.output_dir="${out}"`,
    "--orchestrator.max_turns=4",
    "--orchestrator.tree.roots=2",
    "--orchestrator.tree.branching_factor=2",
    "--orchestrator.tree.branch_turns=[1]",
    `--inference.port=${port}`,
    `--policy.base_url="http://127.0.0.1:${port}/v1"`,
  ];
  const first = startLauncher(args, { cwd: out, timeoutMs: 300_000 });
  runs.current = { run: first, runDir };
  const deadline = Date.now() + 240_000;
  while ((readLastCompletedStep(runDir) ?? -1) < 0 || countRows(dbPath, CHILDREN_IN_FLIGHT) < 2) {
    if (Date.now() > deadline || first.child.exitCode !== null)
      throw new Error(`no step done and 2 tree children in flight within 240 s:\n${first.stderr()}`);
    await Bun.sleep(25);
  }
  killEverything(first, runDir);
  await first.done;
  const startStep = (readLastCompletedStep(runDir) ?? -1) + 1;

  const before = new Map<
    string,
    { turns: ReturnType<typeof turnFacts>[]; snapshot: string; done: boolean; parent?: string }
  >();
  const killed = openStore(dbPath);
  try {
    const ids = killed
      .select({ id: tables.trajectories.rolloutId, step: tables.trajectories.step })
      .from(tables.trajectories)
      .all()
      .filter((t) => t.step >= startStep)
      .map((t) => t.id);
    for (const r of readRecordedRollouts(killed, 1, ids)) {
      const stored = readTrajectory(killed, 1, r.rolloutId)!;
      const snapshot = (r.point.state.snapshot as { path: string }).path;
      expect(existsSync(snapshot)).toBe(true);
      before.set(r.rolloutId, {
        turns: stored.turns.map(turnFacts),
        snapshot,
        done: r.point.done,
        ...(r.parent ? { parent: r.parent.trajectoryId } : {}),
      });
    }
  } finally {
    killed.$client.close();
  }
  // one in-flight child's snapshot is lost: it starts over from its parent's branch point, named in a warning
  const [lostId, lost] = [...before.entries()].find(
    ([, r]) => r.parent && before.has(r.parent) && !r.done && r.turns.length < 3,
  )!;
  rmSync(lost.snapshot, { recursive: true, force: true });
  before.delete(lostId);

  const second = startLauncher([...args, "--resume"], { cwd: out, timeoutMs: 300_000 });
  runs.current = { run: second, runDir };
  expect(await second.done).toBe(0);
  expect(second.stderr()).toMatch(
    new RegExp(
      `tree rollout ${lostId} \\(.*\\) starts over from its parent ${lost.parent}'s branch point \\(turn 1\\)`,
    ),
  );

  const db = openStore(dbPath, { readonly: true });
  const continued: string[] = [];
  try {
    for (const [id, was] of before) {
      const t = readTrajectory(db, 1, id)!;
      expect(t.trajectory.status).toBe("done");
      const k = was.turns.length;
      expect(JSON.parse(t.trajectory.metricsJson ?? "{}")["resume/turn"]).toBe(k);
      expect(t.turns.slice(0, k).map(turnFacts)).toEqual(was.turns);
      expect(JSON.parse(t.trajectory.parentJson ?? "null")?.trajectoryId).toBe(was.parent);
      // a child that was in flight went on from its last turn (turns 1..3 on its path unless the env ended it)
      if (was.parent && !was.done && k < 3) {
        continued.push(id);
        expect(t.turns.length).toBeGreaterThan(k);
      }
    }
    expect(continued.length).toBeGreaterThanOrEqual(1);
    const restarted = readTrajectory(db, 1, lostId)!;
    expect(restarted.trajectory.status).toBe("done");
    expect(restarted.turns[0]?.idx).toBe(1);
    expect(JSON.parse(restarted.trajectory.metricsJson ?? "{}")["resume/turn"]).toBeUndefined();
    // every step's trees whole: 2 examples × (2 roots + 4 children), each leaf's path turns 0.., none doubled
    const rows = db.select().from(tables.trajectories).where(eq(tables.trajectories.split, "train")).all();
    for (let s = 0; s < maxSteps; s++) {
      const nodes = rows.filter((r) => r.step === s);
      expect(nodes).toHaveLength(12);
      expect(nodes.filter((r) => r.stopReason === "branched")).toHaveLength(4);
      expect(nodes.every((r) => r.status === "done")).toBe(true);
      const byId = new Map(nodes.map((r) => [r.rolloutId, r]));
      for (const leaf of nodes.filter((r) => r.stopReason !== "branched")) {
        const parent = JSON.parse(leaf.parentJson ?? "null") as { trajectoryId: string } | null;
        expect(parent && byId.get(parent.trajectoryId)?.turnCount).toBe(1);
        // a leaf plays on from turn 1: to max_turns, or until the env ends the episode (a submit)
        const idx = readTrajectory(db, 1, leaf.rolloutId)!.turns.map((t) => t.idx);
        expect(idx).toEqual([1, 2, 3].slice(0, leaf.turnCount));
        if (leaf.stopReason === "max_turns") expect(leaf.turnCount).toBe(3);
        else expect(leaf.stopReason).toBe("done");
      }
    }
    expect(db.select().from(tables.turnResume).all()).toEqual([]);
  } finally {
    db.$client.close();
  }
  const trained = trainedSteps(runDir);
  expect(trained).toEqual(Array.from({ length: maxSteps }, (_, i) => i + 1));
  // every node's snapshots are pruned once its step is trained, those taken as recorded too
  expect(readdirSync(join(runDir, "snapshots"))).toEqual([]);
  expect(survivors(second, runDir)).toEqual([]);
}, 600_000);
