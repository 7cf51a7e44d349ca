import { afterEach, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openStore, readRecordedRollouts, readTrajectory, tables } from "@air/logger-sqlite";
import { and, eq } from "drizzle-orm";
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

/** Rollouts of unfinished steps that have recorded turns and have not ended: what a kill would lose today. */
const IN_FLIGHT = `SELECT count(*) AS n FROM trajectories t WHERE t.status = 'running' AND t.split = 'train'
  AND t.step > coalesce((SELECT max(step) FROM steps WHERE ended_at IS NOT NULL), -1)
  AND (SELECT count(*) FROM turn_resume r WHERE r.rollout_id = t.rollout_id) >= 1`;

/**
 * Eval rollouts in flight with 1 or 2 turns recorded (of 4: the eval is far from its end), in an eval where one
 * has ended already.
 */
const EVAL_IN_FLIGHT = `SELECT count(*) AS n FROM trajectories t WHERE t.status = 'running' AND t.split = 'eval'
  AND (SELECT count(*) FROM turns u WHERE u.rollout_id = t.rollout_id) BETWEEN 1 AND 2
  AND EXISTS (SELECT 1 FROM trajectories e WHERE e.split = 'eval' AND e.step = t.step AND e.status != 'running')`;

function inFlight(dbPath: string, query = IN_FLIGHT): number {
  return countRows(dbPath, query);
}

test("kill -9 of everything mid-step, then --resume: in-flight rollouts continue from their last turn; a lost snapshot starts over with a warning", async () => {
  const out = tempDir("rollouts");
  const runDir = join(out, "quickstart");
  const dbPath = join(runDir, "air.db");
  const port = await freePort();
  const maxSteps = 4;
  const args = [
    CONFIG,
    `--run.max_steps=${maxSteps}`,
    `--run.output_dir="${out}"`,
    "--orchestrator.max_turns=4",
    `--inference.port=${port}`,
    `--policy.base_url="http://127.0.0.1:${port}/v1"`,
  ];
  const first = startLauncher(args, { cwd: out, timeoutMs: 300_000 });
  runs.current = { run: first, runDir };
  const deadline = Date.now() + 240_000;
  while ((readLastCompletedStep(runDir) ?? -1) < 0 || inFlight(dbPath) < 3) {
    if (Date.now() > deadline || first.child.exitCode !== null)
      throw new Error(`no step done and 3 rollouts in flight within 240 s:\n${first.stderr()}`);
    await Bun.sleep(25);
  }
  killEverything(first, runDir);
  await first.done;
  const startStep = (readLastCompletedStep(runDir) ?? -1) + 1;

  // what the store holds of the killed step's rollouts, as the resumed run will read it
  const before = new Map<string, { turns: ReturnType<typeof turnFacts>[]; snapshot: string }>();
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
      before.set(r.rolloutId, { turns: stored.turns.map(turnFacts), snapshot });
    }
  } finally {
    killed.$client.close();
  }
  expect(before.size).toBeGreaterThanOrEqual(3);
  // one rollout's snapshot is lost: it must start over, named in a warning
  const [lostId, lost] = [...before.entries()][0]!;
  rmSync(lost.snapshot, { recursive: true, force: true });
  before.delete(lostId);

  const second = startLauncher([...args, "--resume"], { cwd: out, timeoutMs: 300_000 });
  runs.current = { run: second, runDir };
  expect(await second.done).toBe(0);
  expect(second.stderr()).toContain(`rollout ${lostId} (`);
  expect(second.stderr()).toMatch(
    new RegExp(`rollout ${lostId} \\(.*\\) starts over: .*snapshot ${lostId}-t\\d+`),
  );

  const db = openStore(dbPath, { readonly: true });
  try {
    for (const [id, was] of before) {
      const t = readTrajectory(db, 1, id)!;
      expect(t.trajectory.status).toBe("done");
      const k = was.turns.length;
      expect(JSON.parse(t.trajectory.metricsJson ?? "{}")["resume/turn"]).toBe(k);
      // the recorded turns as they were (prompts, replies, observations, token counts, logprobs, versions)
      expect(t.turns.slice(0, k).map(turnFacts)).toEqual(was.turns);
      const next = t.turns[k];
      if (next) {
        // the conversation went on from the recorded one: the next prompt is the last prompt, reply, observation
        const last = t.turns[k - 1]!;
        expect(next.prompt).toEqual([
          ...last.prompt,
          { role: "assistant", content: last.completion },
          { role: "user", content: last.observation },
        ]);
        expect(next.promptTokens ?? 0).toBeGreaterThanOrEqual(
          (last.promptTokens ?? 0) + (last.completionTokens ?? 0),
        );
      }
    }
    const restarted = readTrajectory(db, 1, lostId)!;
    expect(restarted.trajectory.status).toBe("done");
    expect(JSON.parse(restarted.trajectory.metricsJson ?? "{}")["resume/turn"]).toBeUndefined();
    // every step recorded once, with its whole batch (8 rollouts), none doubled or lost
    const perStep = new Map<number, number>();
    for (const r of db
      .select({ step: tables.trajectories.step })
      .from(tables.trajectories)
      .where(eq(tables.trajectories.split, "train"))
      .all())
      perStep.set(r.step, (perStep.get(r.step) ?? 0) + 1);
    expect([...perStep.entries()].sort((a, b) => a[0] - b[0])).toEqual(
      Array.from({ length: maxSteps }, (_, s) => [s, 8]),
    );
    expect(db.select().from(tables.turnResume).all()).toEqual([]);
  } finally {
    db.$client.close();
  }
  // every step trained once: the trainer's steps 1..maxSteps, none twice
  const trained = trainedSteps(runDir);
  expect(trained).toEqual(Array.from({ length: maxSteps }, (_, i) => i + 1));
  // every rollout's snapshots are pruned once it ended
  expect(readdirSync(join(runDir, "snapshots"))).toEqual([]);
  expect(survivors(second, runDir)).toEqual([]);
}, 600_000);

// max_steps 1: the eval cut short follows the last step, so the resumed run has no step left but that eval
for (const maxSteps of [2, 1])
  test(`kill -9 of everything during the eval after a step, then --resume (max_steps ${maxSteps}): that eval runs once before the next step, its in-flight rollouts continue from their last turn`, async () => {
    const out = tempDir("eval-resume");
    const runDir = join(out, "quickstart");
    const dbPath = join(runDir, "air.db");
    const port = await freePort();
    const args = [
      CONFIG,
      `--run.max_steps=${maxSteps}`,
      `--run.output_dir="${out}"`,
      "--orchestrator.max_turns=4",
      "--orchestrator.eval_every=1",
      `--inference.port=${port}`,
      `--policy.base_url="http://127.0.0.1:${port}/v1"`,
    ];
    const first = startLauncher(args, { cwd: out, timeoutMs: 300_000 });
    runs.current = { run: first, runDir };
    const deadline = Date.now() + 240_000;
    while (inFlight(dbPath, EVAL_IN_FLIGHT) < 2) {
      if (Date.now() > deadline || first.child.exitCode !== null)
        throw new Error(`no eval with 2 rollouts in flight and 1 ended within 240 s:\n${first.stderr()}`);
      await Bun.sleep(25);
    }
    killEverything(first, runDir);
    await first.done;
    // the eval follows its step's weights, so the kill resumes after that step
    const evalStep = readLastCompletedStep(runDir) ?? -1;
    expect(evalStep).toBeGreaterThanOrEqual(0);

    type Facts = { turns: ReturnType<typeof turnFacts>[]; startedAt: number | null };
    const inFlightBefore = new Map<string, Facts>();
    const endedBefore = new Map<string, Facts>();
    const killed = openStore(dbPath);
    try {
      // the kill landed during the eval: no eval:end of it is stored
      const ended = killed.select().from(tables.evaluations).all();
      expect(ended.filter((e) => e.step === evalStep)).toEqual([]);
      const ids = killed
        .select({ id: tables.trajectories.rolloutId })
        .from(tables.trajectories)
        .where(and(eq(tables.trajectories.split, "eval"), eq(tables.trajectories.step, evalStep)))
        .all()
        .map((t) => t.id);
      for (const r of readRecordedRollouts(killed, 1, ids)) {
        const stored = readTrajectory(killed, 1, r.rolloutId)!;
        const facts = { turns: stored.turns.map(turnFacts), startedAt: stored.trajectory.startedAt };
        (r.stopReason ? endedBefore : inFlightBefore).set(r.rolloutId, facts);
      }
    } finally {
      killed.$client.close();
    }
    expect(inFlightBefore.size).toBeGreaterThanOrEqual(2);
    expect(endedBefore.size).toBeGreaterThanOrEqual(1);

    const second = startLauncher([...args, "--resume"], { cwd: out, timeoutMs: 300_000 });
    runs.current = { run: second, runDir };
    expect(await second.done).toBe(0);
    expect(second.stderr()).toContain(`the eval after step ${evalStep} was cut short: it runs again`);
    // one eval line per eval, the interrupted one's printed by the resumed run before its next step
    const evalLines = (text: string, step: number) =>
      text.split("\n").filter((l) => l.includes(`eval after step ${step} |`));
    for (let s = 0; s < maxSteps; s++) expect(evalLines(first.stdout() + second.stdout(), s)).toHaveLength(1);
    expect(evalLines(first.stdout(), evalStep)).toEqual([]);
    if (evalStep + 1 < maxSteps) {
      const stdout = second.stdout();
      expect(stdout.indexOf(`eval after step ${evalStep} |`)).toBeLessThan(
        stdout.indexOf(`step ${evalStep + 1} (`),
      );
    }

    const db = openStore(dbPath, { readonly: true });
    try {
      // each eval's end stored once, with the weights of the step it follows
      const all = db
        .select({ step: tables.evaluations.step, policy: tables.evaluations.policy })
        .from(tables.evaluations)
        .where(eq(tables.evaluations.task, "all"))
        .all();
      expect(all.map((e) => [e.step, e.policy]).sort()).toEqual(
        Array.from({ length: maxSteps }, (_, s) => [s, `v${s + 1}`]),
      );
      // each eval's 8 rollouts (2 examples × 4), all ended, none doubled or lost
      const evalRows = db
        .select({ step: tables.trajectories.step, status: tables.trajectories.status })
        .from(tables.trajectories)
        .where(eq(tables.trajectories.split, "eval"))
        .all();
      expect(evalRows.filter((r) => r.status === "running")).toEqual([]);
      for (let s = 0; s < maxSteps; s++) expect(evalRows.filter((r) => r.step === s)).toHaveLength(8);
      for (const [id, was] of inFlightBefore) {
        const t = readTrajectory(db, 1, id)!;
        const k = was.turns.length;
        expect(t.trajectory.status).toBe("done");
        expect(t.trajectory.startedAt).toBe(was.startedAt);
        expect(JSON.parse(t.trajectory.metricsJson ?? "{}")["resume/turn"]).toBe(k);
        // the recorded turns as they were, each once (not redone)
        expect(t.turns.slice(0, k).map(turnFacts)).toEqual(was.turns);
        expect(t.turns.map((x) => x.idx)).toEqual(t.turns.map((_, i) => i));
      }
      for (const [id, was] of endedBefore) {
        const t = readTrajectory(db, 1, id)!;
        expect(t.turns.map(turnFacts)).toEqual(was.turns);
        expect(JSON.parse(t.trajectory.metricsJson ?? "{}")["resume/turn"]).toBe(was.turns.length);
      }
      expect(db.select().from(tables.turnResume).all()).toEqual([]);
    } finally {
      db.$client.close();
    }
    // every step trained once, and every rollout's snapshots pruned
    const trained = trainedSteps(runDir);
    expect(trained).toEqual(Array.from({ length: maxSteps }, (_, i) => i + 1));
    expect(readdirSync(join(runDir, "snapshots"))).toEqual([]);
    expect(survivors(second, runDir)).toEqual([]);
  }, 600_000);
