import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { listTrajectories, openStoreReadOnly, readTrajectory } from "@air/logger-sqlite/read";
import type { ReplayReport } from "./replay.ts";
import { BINS, NOISY_ROOT, REPO, replayCli, scriptedRun } from "./test-runs.ts";

const dir = mkdtempSync(join(tmpdir(), "air-replay-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The report a replay wrote (its path is the last line of the output). */
function report(stdout: string): ReplayReport {
  const path = /report: (\S+replay\.json)/.exec(stdout)?.[1];
  if (!path) throw new Error(`no report path in:\n${stdout}`);
  return JSON.parse(readFileSync(path, "utf8")) as ReplayReport;
}

function stored(runDir: string) {
  const db = openStoreReadOnly(join(runDir, "air.db"));
  try {
    const ids = listTrajectories(db, 1, { page: 1, per: 10, sort: "step" }).rows.map((r) => r.rolloutId);
    return ids.map((id) => readTrajectory(db, 1, id)!);
  } finally {
    db.$client.close();
  }
}

describe("replay of a quickstart-like run (apartmentRent, scripted policy, local runtime)", () => {
  let runDir = "";
  beforeAll(() => {
    runDir = scriptedRun({
      dir,
      name: "qs",
      mlgymRoot: REPO,
      task: "apartmentRent",
      commands: ["python train.py --model linear", "validate", "python train.py --model forest"],
      maxTurns: 3,
    });
  }, 240_000);

  test("reproduces the stored scores and observations, turn by turn", () => {
    const [first] = stored(runDir);
    expect(first!.trajectory.finalScore).toBeGreaterThan(0.9); // the forest, auto-submitted at the last turn
    const r = replayCli([runDir, first!.trajectory.rolloutId, "--times", "2"]);
    expect(r.stderr).not.toContain("error");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("reproduced the stored score: 2/2; identical observations: 2/2");
    const rep = report(r.stdout);
    expect(rep.commands).toEqual(first!.turns.map((t) => t.command!));
    expect(rep.distribution).toMatchObject({ n: 2, std: 0, mean: first!.trajectory.finalScore });
    for (const run of rep.runs) {
      expect(run.scores).toEqual(first!.turns.map((t) => t.scores));
      expect(run.divergence).toBeNull();
    }
    // The replay's sandboxes and report live under the run dir's replays/; the run's store is untouched.
    expect(rep.replayDir.startsWith(join(runDir, "replays"))).toBe(true);
    expect(stored(runDir)).toHaveLength(2);
  }, 300_000);

  test("bad input exits 2 with a clear message", () => {
    const cases: Array<[string[], string]> = [
      [[join(dir, "no-such-run"), "s0-r0"], "no such run dir"],
      [[dir, "s0-r0"], "is not a run dir of `bun run rl`"],
      [[runDir, "s9-r9"], 'no trajectory "s9-r9" in run 1'],
      [[runDir], "needs a run dir and a trajectory id"],
      [[runDir, "s0-r0", "--times", "0"], "--times needs a whole number"],
      [[runDir, "s0-r0", "--bogus"], "unknown flag --bogus"],
    ];
    for (const [args, message] of cases) {
      const r = replayCli(args, 30_000);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toContain(message);
      expect(r.stderr).toContain("usage: replay");
    }
    expect(replayCli([runDir, "s9-r9"], 30_000).stderr).toContain("some ids: s0-r");
  }, 120_000);

  test("a run whose saved config no longer validates is named, not replayed", () => {
    const broken = join(dir, "broken");
    cpSync(runDir, broken, { recursive: true });
    const file = join(broken, "config.resolved.json");
    const saved = JSON.parse(readFileSync(file, "utf8"));
    saved.root.orchestrator.max_turns = "three";
    writeFileSync(file, JSON.stringify(saved));
    const r = replayCli([broken, "s0-r0"], 60_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the run's saved config no longer validates: orchestrator.max_turns");
  }, 120_000);
});

describe("replay of a nondeterministic task (fixture noisyScore: the evaluator prints a random score)", () => {
  test("shows the spread of the scores and where the observations diverge", () => {
    const runDir = scriptedRun({
      dir,
      name: "noisy",
      mlgymRoot: NOISY_ROOT,
      task: "noisyScore",
      commands: ["cat strategy.py", "validate", "submit"],
      maxTurns: 3,
    });
    const [first] = stored(runDir);
    const r = replayCli([runDir, first!.trajectory.rolloutId, "--times", "4"]);
    expect(r.code).toBe(0);
    const rep = report(r.stdout);
    expect(rep.distribution.n).toBe(4);
    expect(rep.distribution.std!).toBeGreaterThan(0);
    expect(rep.distribution.max! - rep.distribution.min!).toBeGreaterThan(0);
    expect(rep.reproduced).toBe(0);
    // Turn 0 (`cat strategy.py`) is deterministic; the validate at turn 1 prints a new draw.
    for (const run of rep.runs) expect(run.divergence?.turn).toBe(1);
    expect(r.stdout).toContain("first diverges at turn 1 (`validate`)");
    expect(existsSync(join(rep.replayDir, "replay.json"))).toBe(true);
  }, 480_000);
});

describe("replay on the docker runtime", () => {
  let runDir = "";
  beforeAll(() => {
    runDir = scriptedRun({
      dir,
      name: "docker",
      mlgymRoot: REPO,
      task: "apartmentRent",
      commands: ["python train.py --model linear", "validate"],
      maxTurns: 2,
      runtime: "docker",
    });
  }, 240_000);

  test("reproduces a stored apartmentRent trajectory and leaves no container of the replay behind", async () => {
    const [first] = stored(runDir);
    const r = replayCli([runDir, first!.trajectory.rolloutId, "--times", "2"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("reproduced the stored score: 2/2; identical observations: 2/2");
    const rep = report(r.stdout);
    // The runtime labels its containers air.run=<its run dir>: the replay's dir.
    const left = Bun.spawnSync(["docker", "ps", "-aq", "--filter", `label=air.run=${rep.replayDir}`]);
    expect(left.exitCode).toBe(0);
    expect(left.stdout.toString().trim()).toBe("");
  }, 480_000);

  test("a replay killed with -9 leaves its containers; `rl clean` on the output dir removes them", async () => {
    const [first] = stored(runDir);
    const prefix = join(runDir, "replays");
    /** Ids of air's containers whose run label is one of this run's replay dirs. */
    const replayContainers = () =>
      Bun.spawnSync([
        "docker",
        "ps",
        "-a",
        "--filter",
        "label=air.managed=true",
        "--format",
        '{{.ID}} {{.Label "air.run"}}',
      ])
        .stdout.toString()
        .split("\n")
        .filter((line) => line.split(" ")[1]?.startsWith(`${prefix}/`))
        .map((line) => line.split(" ")[0]);
    const child = Bun.spawn(
      ["bun", join(BINS, "replay.ts"), runDir, first!.trajectory.rolloutId, "--times", "2"],
      {
        stdout: "ignore",
        stderr: "ignore",
      },
    );
    try {
      const deadline = Date.now() + 120_000;
      while (replayContainers().length === 0) {
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`no replay container appeared in 120 s (replay exit ${child.exitCode})`);
        await Bun.sleep(200);
      }
    } finally {
      child.kill("SIGKILL");
      await child.exited;
    }
    await Bun.sleep(1000); // a container the engine was still creating when the replay died
    try {
      expect(replayContainers().length).toBeGreaterThan(0);
      const clean = Bun.spawnSync(["bun", join(BINS, "rl.ts"), "clean", dirname(runDir)], {
        stdout: "pipe",
        stderr: "pipe",
        timeout: 120_000,
      });
      expect(clean.exitCode).toBe(0);
      expect(clean.stdout.toString() + clean.stderr.toString()).toContain("of replay");
      expect(replayContainers()).toEqual([]);
    } finally {
      // When the sweep failed, remove what it left by id (the test made them), so a failure leaks nothing.
      const left = replayContainers();
      if (left.length > 0) Bun.spawnSync(["docker", "rm", "-f", ...(left as string[])]);
    }
  }, 480_000);
});
