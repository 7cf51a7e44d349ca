import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { trackChild } from "../proc.ts";
import type { BenchReport } from "../report.ts";
import { fmt, seededRandom } from "../stats.ts";
import { inferenceFaults, killAllThenResume } from "./faults-more.ts";
import { CONFIG, freePort, leftovers, REPO, RL, readPidFile, runContainers, until } from "./faults-util.ts";
import type { BenchOptions } from "./pipeline.ts";

const IMAGE = process.env.AIR_TEST_IMAGE ?? "air-mlgym-test:latest";
/** How long after the fault everything of the run must be gone. */
const CLEAN_WITHIN_MS = 10_000;

type FaultKind =
  | "SIGINT launcher"
  | "SIGTERM launcher"
  | "SIGKILL launcher"
  | "SIGKILL bun run"
  | "SIGKILL inference"
  | "SIGKILL trainer";

const KINDS: FaultKind[] = [
  "SIGINT launcher",
  "SIGTERM launcher",
  "SIGKILL launcher",
  "SIGKILL bun run",
  "SIGKILL inference",
  "SIGKILL trainer",
];

interface FaultRun {
  kind: FaultKind;
  /** Everything gone within CLEAN_WITHIN_MS. */
  clean: boolean;
  /** What was left at CLEAN_WITHIN_MS. */
  leaked: string[];
  /** Time until everything was gone (NaN when still there after EVENTUALLY_MS). */
  cleanMs: number;
}

/** How long to keep watching after CLEAN_WITHIN_MS, to tell slow teardown from a leak. */
const EVENTUALLY_MS = 60_000;

/** One quickstart run with a fault at a random moment after its children are up; counts what is left. */
async function faultRun(kind: FaultKind, docker: Docker | undefined, rand: () => number): Promise<FaultRun> {
  const out = mkdtempSync(join(tmpdir(), "air-bench-faults-"));
  const runDir = join(out, "faults");
  const runtime = docker ? ["--env.runtime", "docker", "--env.docker.image", IMAGE] : [];
  const port = await freePort();
  const args = [
    CONFIG,
    ...["--run.output_dir", out, "--run.name", "faults", "--run.max_steps", "40", ...runtime],
    ...["--inference.port", String(port), "--policy.base_url", JSON.stringify(`http://127.0.0.1:${port}/v1`)],
  ];
  const argv = kind === "SIGKILL bun run" ? ["bun", "run", "rl", ...args] : ["bun", RL, ...args];
  const log = join(out, "launcher.log");
  const child = trackChild(
    Bun.spawn(argv, { cwd: REPO, stdout: Bun.file(log), stderr: Bun.file(log), stdin: "ignore" }),
  );
  const seen = new Set<number>();
  try {
    const up = await until(() => (readPidFile(runDir)?.children.length ?? 0) >= 2, 120_000);
    if (!up) {
      const tail = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").slice(-3).join(" / ") : "";
      throw new Error(`the run in ${out} did not start its children within 120 s: ${tail}`);
    }
    await Bun.sleep(2000 + rand() * 10_000);
    const pids = readPidFile(runDir);
    if (!pids) throw new Error("the pid file vanished before the fault");
    seen.add(pids.launcher.pid);
    for (const c of pids.children) seen.add(c.pid);
    const target = {
      "SIGINT launcher": () => process.kill(pids.launcher.pid, "SIGINT"),
      "SIGTERM launcher": () => process.kill(pids.launcher.pid, "SIGTERM"),
      "SIGKILL launcher": () => process.kill(pids.launcher.pid, "SIGKILL"),
      "SIGKILL bun run": () => child.kill("SIGKILL"),
      "SIGKILL inference": () =>
        process.kill(pids.children.find((c) => c.role === "inference")!.pid, "SIGKILL"),
      "SIGKILL trainer": () => process.kill(pids.children.find((c) => c.role === "trainer")!.pid, "SIGKILL"),
    }[kind];
    const t0 = Date.now();
    target();
    const gone = async () => (await leftovers(docker, runDir, seen)).length === 0;
    const clean = await until(gone, CLEAN_WITHIN_MS);
    const leaked = clean ? [] : await leftovers(docker, runDir, seen);
    const eventually = clean || (await until(gone, EVENTUALLY_MS - CLEAN_WITHIN_MS));
    return { kind, clean, leaked, cleanMs: eventually ? Date.now() - t0 : Number.NaN };
  } finally {
    child.kill("SIGKILL");
    Bun.spawnSync(["bun", RL, "clean", out, "--grace-ms", "1000"], {
      cwd: REPO,
      stdout: "ignore",
      stderr: "ignore",
    });
    rmSync(out, { recursive: true, force: true });
  }
}

interface KillRun {
  code: number;
  kills: number;
  steps: number;
  perStep: string;
  doubled: number;
  failedRollouts: number;
  /** Steps whose batch had samples (a step with none takes no prime-rl step, so writes no batch file). */
  stepsWithSamples: number;
  batchFiles: number;
}

/**
 * A docker quickstart run of `steps` steps while a killer removes a random labelled container every ~0.5–1.5 s,
 * at most `kills` times: the run must finish, every step keeps its batch of rollouts (retried or failed), none
 * is doubled, and the trainer got one batch file per step.
 */
async function containerKills(
  docker: Docker,
  steps: number,
  kills: number,
  rand: () => number,
): Promise<KillRun> {
  const out = mkdtempSync(join(tmpdir(), "air-bench-kills-"));
  const runDir = join(out, "kills");
  const argv = [
    "bun",
    RL,
    CONFIG,
    "--run.output_dir",
    out,
    "--run.name",
    "kills",
    "--run.max_steps",
    String(steps),
  ];
  const child = trackChild(
    Bun.spawn(
      [
        ...argv,
        "--env.runtime",
        "docker",
        "--env.docker.image",
        IMAGE,
        "--orchestrator.rollout_retries",
        "2",
      ],
      {
        cwd: REPO,
        stdout: "ignore",
        stderr: "ignore",
        stdin: "ignore",
      },
    ),
  );
  let done = 0;
  const killer = (async () => {
    while (done < kills && child.exitCode === null) {
      await Bun.sleep(500 + rand() * 1000);
      const ids = await runContainers(docker, runDir).catch(() => []);
      const id = ids[Math.floor(rand() * ids.length)];
      if (!id) continue;
      await docker
        .getContainer(id)
        .kill()
        .then(() => done++)
        .catch(() => {});
    }
  })();
  try {
    const code = await Promise.race([child.exited, Bun.sleep(15 * 60_000).then(() => -1)]);
    await killer;
    const db = new Database(join(runDir, "air.db"), { readonly: true });
    const rows = db
      .query(
        "SELECT step, rollout_id AS id, MAX(stop_reason = 'failed') AS failed FROM trajectories GROUP BY step, rollout_id",
      )
      .all() as Array<{ step: number; id: string; failed: number }>;
    const withSamples = db.query("SELECT COUNT(*) AS n FROM steps WHERE sample_count > 0").get() as {
      n: number;
    };
    db.close();
    const byStep = new Map<number, number>();
    const stepsOf = new Map<string, number>();
    for (const r of rows) {
      byStep.set(r.step, (byStep.get(r.step) ?? 0) + 1);
      stepsOf.set(r.id, (stepsOf.get(r.id) ?? 0) + 1);
    }
    const rolloutsDir = [
      join(runDir, "prime-rl", "rollouts"),
      join(runDir, "prime-rl", "run_default", "rollouts"),
    ].find((d) => existsSync(d));
    return {
      code,
      kills: done,
      steps: byStep.size,
      perStep: [...byStep.values()].join(" "),
      doubled: [...stepsOf.values()].filter((n) => n > 1).length,
      failedRollouts: rows.filter((r) => r.failed).length,
      stepsWithSamples: withSamples.n,
      batchFiles: rolloutsDir ? readdirSync(rolloutsDir).length : 0,
    };
  } finally {
    child.kill("SIGKILL");
    Bun.spawnSync(["bun", RL, "clean", out, "--grace-ms", "1000"], {
      cwd: REPO,
      stdout: "ignore",
      stderr: "ignore",
    });
    rmSync(out, { recursive: true, force: true });
  }
}

/**
 * `bun run bench faults [--quick]`: the quickstart (docker runtime when an engine and the test image are there)
 * hit by a fault at a random moment — signals to the launcher, to the `bun run` wrapper and to each child —
 * then everything of the run (processes by pid file and run marker, labelled containers) must be gone within
 * 10 s; and a run whose containers are killed mid-rollout must finish with no rollout lost or doubled.
 */
export async function faultsBenchmark(options: BenchOptions): Promise<BenchReport> {
  const runsPerKind = Number(process.env.AIR_BENCH_FAULT_RUNS ?? (options.quick ? 2 : 5));
  const rand = seededRandom(7);
  let docker: Docker | undefined = new Docker();
  try {
    await docker.ping();
    await docker.getImage(IMAGE).inspect();
  } catch (error) {
    console.error(`faults: no docker engine or no ${IMAGE} (${String(error)}); the local runtime is used`);
    docker = undefined;
  }
  const rows: string[][] = [];
  const notesOut: string[] = [];
  for (const kind of KINDS) {
    const results: FaultRun[] = [];
    const failures: string[] = [];
    for (let i = 0; i < runsPerKind; i++) {
      try {
        results.push(await faultRun(kind, docker, rand));
      } catch (error) {
        failures.push(String(error));
        console.error(`faults: ${kind}: ${String(error)}`);
      }
    }
    if (failures.length) notesOut.push(`${kind}: ${failures.length} run(s) did not start: ${failures[0]}`);
    const clean = results.filter((r) => r.clean);
    const gone = results.filter((r) => Number.isFinite(r.cleanMs));
    const times = gone.map((r) => r.cleanMs).sort((a, b) => a - b);
    const leaked = results.flatMap((r) => r.leaked);
    rows.push([
      kind,
      String(results.length),
      `${clean.length} of ${results.length}`,
      leaked.length ? `${leaked.length}: ${leaked.slice(0, 3).join(", ")}` : "0",
      `${gone.length} of ${results.length}`,
      times.length
        ? `${fmt(times[Math.floor(times.length / 2)]! / 1000)} s (max ${fmt(times.at(-1)! / 1000)} s)`
        : "–",
    ]);
  }
  const tables = [
    {
      title: `Signals at a random moment 2–12 s after the children are up (${docker ? "docker" : "local"} runtime)`,
      headers: [
        "fault",
        "runs",
        "clean within 10 s",
        "left at 10 s",
        "all gone within 60 s",
        "time to clean (median, max)",
      ],
      rows,
    },
  ];
  const goals = rows.map((r) => `${r[0]}: ${r[2]} clean (goal: all)`);
  if (docker) {
    const kills = options.quick ? 10 : 50;
    const k = await containerKills(docker, options.quick ? 3 : 8, kills, rand);
    tables.push({
      title: "Containers killed mid-rollout (docker kill of a random labelled container every 0.5–1.5 s)",
      headers: [
        "exit",
        "containers killed",
        "steps",
        "rollouts per step",
        "doubled",
        "failed rollouts",
        "steps with samples",
        "batch files",
      ],
      rows: [
        [
          String(k.code),
          String(k.kills),
          String(k.steps),
          k.perStep,
          String(k.doubled),
          String(k.failedRollouts),
          String(k.stepsWithSamples),
          String(k.batchFiles),
        ],
      ],
    });
    goals.push(
      `container kills: exit ${k.code} (goal 0), ${k.doubled} doubled (goal 0), rollouts per step ${k.perStep} (goal 8 each), ${k.batchFiles} batch files for ${k.stepsWithSamples} steps with samples (goal equal)`,
    );
  }
  const resume = await killAllThenResume(options.quick ? 4 : 6);
  tables.push({
    title: "kill -9 of everything mid-step (launcher, reaper, children), then `rl --resume`",
    headers: [
      "killed after step",
      "resume exit",
      "last completed step",
      "store runs",
      "trajectories per step",
      "steps trained twice",
      "batch files",
    ],
    rows: [
      [
        String(resume.killedAfterStep),
        String(resume.resumeExit),
        String(resume.lastCompletedStep),
        String(resume.storeRuns),
        resume.perStep,
        String(resume.trainedTwice),
        String(resume.batches),
      ],
    ],
  });
  goals.push(
    `kill -9 then --resume: exit ${resume.resumeExit} (goal 0), ${resume.storeRuns} store run(s) (goal 1), ` +
      `${resume.trainedTwice} step(s) trained twice (goal 0)`,
  );
  const proxy = await inferenceFaults(options.quick ? 3 : 6, rand);
  tables.push({
    title:
      "Inference faults: a proxy before the real tiny server answers 500, hangs past generate_ms or closes mid-answer",
    headers: ["exit", "chat requests", "injected", "rollouts per step", "failed rollouts"],
    rows: [
      [
        String(proxy.exit),
        String(proxy.requests),
        proxy.injected,
        proxy.perStep,
        String(proxy.failedRollouts),
      ],
    ],
  });
  goals.push(
    `inference faults: exit ${proxy.exit} (goal 0), rollouts per step ${proxy.perStep} (goal 8 each)`,
  );
  return {
    name: "faults",
    title: "7. Faults: nothing left, nothing lost",
    command: `bun run bench faults --write${options.quick ? " --quick" : ""} (AIR_BENCH_FAULT_RUNS=${runsPerKind})`,
    tables,
    goals,
    notes: [
      ...notesOut,
      "Each run is `configs/quickstart.toml` with 40 steps (so the fault lands mid-run), started as `bun rl.ts` " +
        "(or `bun run rl` for the wrapper row). Left behind = a process from the pid file or carrying the run's " +
        "AIR_RUN_DIR marker, or a container labelled with the run dir, still there 10 s after the fault.",
      "SIGKILL of the launcher is handled by the run's reaper (its own session, waiting on a pipe only the " +
        "launcher holds); SIGKILL of `bun run` by the launcher watching its parent; a child's death by the supervisor.",
      "Not covered here yet: dockerd restarted mid-run, the trainer crashing and restarting (a crashed child stops " +
        "the run: it is not restarted), a full disk under the run dir.",
    ],
  };
}
