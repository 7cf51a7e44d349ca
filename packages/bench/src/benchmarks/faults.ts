import Docker from "dockerode";
import type { BenchReport, Table } from "../report.ts";
import { seededRandom } from "../stats.ts";
import { diskFullRun } from "./faults-disk.ts";
import { dockerdRestartRun, ensureMainDockerd, mainDockerdPid } from "./faults-dockerd.ts";
import { containerKills } from "./faults-kills.ts";
import { inferenceFaults, killAllThenResume } from "./faults-more.ts";
import { type Outcome, outcomeRow, outcomeTable } from "./faults-rows.ts";
import { signalFaults } from "./faults-signals.ts";
import { trainerCrashRun } from "./faults-trainer.ts";
import { KEPT_DIR } from "./faults-util.ts";
import type { BenchOptions } from "./pipeline.ts";

const IMAGE = process.env.AIR_TEST_IMAGE ?? "air-mlgym-test:latest";

/** Runs `one` `runs` times; a run that throws is a note, not the end of the benchmark. */
async function repeat(
  fault: string,
  runs: number,
  one: () => Promise<Outcome>,
  notes: string[],
): Promise<string[] | undefined> {
  const results: Outcome[] = [];
  for (let i = 0; i < runs; i++) {
    try {
      results.push(await one());
    } catch (error) {
      notes.push(`${fault}: a run could not be made: ${String(error)}`);
      console.error(`faults: ${fault}: ${String(error)}`);
    }
  }
  const kept = results.flatMap((r) => (r.kept ? [r.kept] : []));
  if (kept.length) notes.push(`${fault}: logs of the runs that missed a goal: ${kept.join(", ")}`);
  return results.length ? outcomeRow(fault, results) : undefined;
}

/**
 * `bun run bench faults [--quick]`: the quickstart (docker runtime when an engine and the test image are there) hit
 * by faults — signals to the launcher, the `bun run` wrapper and each child (nothing may be left 10 s later);
 * containers killed mid-rollout; dockerd restarted mid-run; the trainer crashing (restarted within
 * `max_restarts`, the run stopped past it); the disk filling up (clear error, store readable, `--resume` once
 * there is room); `kill -9` of everything then `--resume`; a fault proxy before the inference server. Runs per
 * signal: AIR_BENCH_FAULT_RUNS (default 5, quick 2); per other fault: AIR_BENCH_FAULT_RUNS_OTHER (default 3, quick 1).
 */
export async function faultsBenchmark(options: BenchOptions): Promise<BenchReport> {
  const runsPerKind = Number(process.env.AIR_BENCH_FAULT_RUNS ?? (options.quick ? 2 : 5));
  const runsOther = Number(process.env.AIR_BENCH_FAULT_RUNS_OTHER ?? (options.quick ? 1 : 3));
  const rand = seededRandom(7);
  let docker: Docker | undefined = new Docker();
  try {
    await docker.ping();
    await docker.getImage(IMAGE).inspect();
  } catch (error) {
    console.error(`faults: no docker engine or no ${IMAGE} (${String(error)}); the local runtime is used`);
    docker = undefined;
  }
  const notes: string[] = [];
  const signals = await signalFaults(runsPerKind, docker, IMAGE, rand);
  notes.push(...signals.notes);
  const tables: Table[] = [signals.table];
  const goals = [...signals.goals];

  const other: string[][] = [];
  const add = (row: string[] | undefined) => {
    if (!row) return;
    other.push(row);
    goals.push(
      `${row[0]}: ${row[2]} ended as the goal says, left ${row[3]}, lost / doubled ${row[4]}, trained twice / never ${row[5]} (goal: all, 0, 0 / 0, 0 / 0)`,
    );
  };
  if (docker && mainDockerdPid() !== undefined) {
    const engine = docker;
    try {
      add(
        await repeat(
          "dockerd restarted mid-run, engine as [env.docker] hosts (exit 0)",
          runsOther,
          () => dockerdRestartRun(engine, IMAGE, rand, { hosts: true }),
          notes,
        ),
      );
      add(
        await repeat(
          "dockerd restarted mid-run, default engine (exit 0)",
          1,
          () => dockerdRestartRun(engine, IMAGE, rand, { hosts: false }),
          notes,
        ),
      );
    } finally {
      if (!(await ensureMainDockerd(engine)))
        notes.push("the docker engine did not come back after the restarts");
    }
  } else notes.push("dockerd restart: not run (no docker engine started through .cache/dockerd.pid)");
  add(
    await repeat(
      "trainer SIGKILLed twice, max_restarts = 2 (exit 0)",
      runsOther,
      () => trainerCrashRun(2, 2, rand),
      notes,
    ),
  );
  add(
    await repeat(
      "trainer SIGKILLed twice, max_restarts = 1 (exit 1, bound named)",
      runsOther,
      () => trainerCrashRun(1, 2, rand),
      notes,
    ),
  );
  add(
    await repeat("disk full (6 MiB tmpfs), then --resume on 64 MiB", runsOther, () => diskFullRun(), notes),
  );
  if (other.length) tables.push(outcomeTable(other));

  if (docker) {
    // 14 steps: long enough for 50 kills at one every 0.5–1.5 s
    const k = await containerKills(docker, IMAGE, options.quick ? 3 : 14, options.quick ? 10 : 50, rand);
    tables.push(k.table);
    goals.push(k.goal);
  }
  const resume = await killAllThenResume(options.quick ? 4 : 6);
  tables.push(resume.table);
  goals.push(resume.goal);
  const proxy = await inferenceFaults(options.quick ? 3 : 6, rand);
  tables.push(proxy.table);
  goals.push(proxy.goal);
  return {
    name: "faults",
    title: "7. Faults: nothing left, nothing lost",
    command:
      `AIR_BENCH_FAULT_RUNS=${runsPerKind} AIR_BENCH_FAULT_RUNS_OTHER=${runsOther} ` +
      `bun run bench faults --write${options.quick ? " --quick" : ""}`,
    tables,
    goals,
    notes: [
      ...notes,
      "Each run is `configs/quickstart.toml`, started as `bun rl.ts` (or `bun run rl` for the wrapper row), with a " +
        "free inference port. Left behind = a process from the pid file or carrying the run's AIR_RUN_DIR marker, " +
        "or a container labelled with the run dir. Lost = a step's training rollouts missing from the store (a " +
        "failed rollout is recorded, not lost); doubled = one recorded twice; trained twice / never = prime-rl " +
        "steps in the trainer's metrics.jsonl more than once / missing.",
      "SIGKILL of the launcher is handled by the run's reaper (its own session, waiting on a pipe only the " +
        "launcher holds); SIGKILL of `bun run` by the launcher watching its parent; a child's death by the " +
        "supervisor; an aborted run sends its children SIGTERM at once, while the orchestrator winds down.",
      `A run that leaves something or misses its goal keeps its stamped launcher log and child logs under ${KEPT_DIR}.`,
      "dockerd is the machine's main engine (`.cache/dockerd.pid`), stopped with SIGTERM and started again by " +
        "scripts/ensure-docker from a detached shell; every container on the machine stops with it. With the engine " +
        "as the one entry of `[env.docker] hosts`, the env drains it when it stops answering (the rollouts it hit " +
        "are retried and wait for it) and readmits it once it answers steadily. With the default engine (no hosts) " +
        "a container that cannot be created while the engine does not answer waits for it (ping every 0.5 s, at " +
        "most `docker.timeout_ms`) and is created again; the rollouts the restart hit are retried.",
    ],
  };
}
