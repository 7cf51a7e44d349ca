import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import type { Table } from "../report.ts";
import { fmt, spread } from "../stats.ts";
import { startRl } from "./faults-run.ts";
import { keepLogs, leftovers, readPidFile, removeRun, until } from "./faults-util.ts";

/** How long after the fault everything of the run must be gone. */
export const CLEAN_WITHIN_MS = 10_000;
/** How long to keep watching after CLEAN_WITHIN_MS, to tell slow teardown from a leak. */
const EVENTUALLY_MS = 60_000;

export type FaultKind =
  | "SIGINT launcher"
  | "SIGTERM launcher"
  | "SIGKILL launcher"
  | "SIGKILL bun run"
  | "SIGKILL inference"
  | "SIGKILL trainer";

export const KINDS: FaultKind[] = [
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
  /** Where its logs were kept (runs that were not clean). */
  kept?: string;
}

/**
 * One quickstart run with a fault at a random moment 2–12 s after its children are up; counts what is left.
 * A run that is not clean keeps its stamped launcher log and child logs under KEPT_DIR.
 */
export async function faultRun(
  kind: FaultKind,
  docker: Docker | undefined,
  image: string,
  rand: () => number,
): Promise<FaultRun> {
  const out = mkdtempSync(join(tmpdir(), "air-bench-faults-"));
  const runtime = docker ? ["--env.runtime", "docker", "--env.docker.image", image] : [];
  const run = await startRl(out, "faults", ["--run.max_steps", "40", ...runtime], {
    wrapper: kind === "SIGKILL bun run",
  });
  const { runDir } = run;
  const seen = new Map<number, string>();
  try {
    const up = await until(() => (readPidFile(runDir)?.children.length ?? 0) >= 2, 120_000);
    if (!up) {
      const tail = run.text().trim().split("\n").slice(-3).join(" / ");
      throw new Error(`the run in ${out} did not start its children within 120 s: ${tail}`);
    }
    await Bun.sleep(2000 + rand() * 10_000);
    const pids = readPidFile(runDir);
    if (!pids) throw new Error("the pid file vanished before the fault");
    seen.set(pids.launcher.pid, "launcher");
    for (const c of pids.children) seen.set(c.pid, c.role ?? "child");
    const child = (role: string) => pids.children.find((c) => c.role === role)?.pid ?? -1;
    const target = {
      "SIGINT launcher": () => process.kill(pids.launcher.pid, "SIGINT"),
      "SIGTERM launcher": () => process.kill(pids.launcher.pid, "SIGTERM"),
      "SIGKILL launcher": () => process.kill(pids.launcher.pid, "SIGKILL"),
      "SIGKILL bun run": () => run.child.kill("SIGKILL"),
      "SIGKILL inference": () => process.kill(child("inference"), "SIGKILL"),
      "SIGKILL trainer": () => process.kill(child("trainer"), "SIGKILL"),
    }[kind];
    run.mark(kind);
    const t0 = Date.now();
    target();
    const gone = async () => (await leftovers(docker, runDir, seen)).length === 0;
    const clean = await until(gone, CLEAN_WITHIN_MS);
    const leaked = clean ? [] : await leftovers(docker, runDir, seen);
    if (!clean) run.mark(`left at ${CLEAN_WITHIN_MS / 1000} s: ${leaked.join(", ")}`);
    const eventually = clean || (await until(gone, EVENTUALLY_MS - CLEAN_WITHIN_MS));
    const cleanMs = eventually ? Date.now() - t0 : Number.NaN;
    if (!clean) run.mark(eventually ? `all gone after ${cleanMs} ms` : "still there after 60 s");
    const kept = clean ? undefined : keepLogs(out, runDir, kind.replace(/\s+/g, "-"));
    return { kind, clean, leaked, cleanMs, kept };
  } finally {
    run.child.kill("SIGKILL");
    removeRun(out);
  }
}

/**
 * Every signal fault `runsPerKind` times: the table (runs, clean within 10 s, what was left, all gone within 60 s,
 * time to clean), one goal line per fault and notes (runs that did not start, where leak logs were kept).
 */
export async function signalFaults(
  runsPerKind: number,
  docker: Docker | undefined,
  image: string,
  rand: () => number,
): Promise<{ table: Table; goals: string[]; notes: string[] }> {
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const kind of KINDS) {
    const results: FaultRun[] = [];
    const failures: string[] = [];
    for (let i = 0; i < runsPerKind; i++) {
      try {
        results.push(await faultRun(kind, docker, image, rand));
      } catch (error) {
        failures.push(String(error));
        console.error(`faults: ${kind}: ${String(error)}`);
      }
    }
    if (failures.length) notes.push(`${kind}: ${failures.length} run(s) did not start: ${failures[0]}`);
    const clean = results.filter((r) => r.clean);
    const gone = results.filter((r) => Number.isFinite(r.cleanMs));
    const times = spread(gone.map((r) => r.cleanMs / 1000));
    const leaked = results.flatMap((r) => r.leaked);
    const kept = results.flatMap((r) => (r.kept ? [r.kept] : []));
    if (kept.length) notes.push(`${kind}: logs of the runs that left something: ${kept.join(", ")}`);
    rows.push([
      kind,
      String(results.length),
      `${clean.length} of ${results.length}`,
      leaked.length ? `${leaked.length}: ${leaked.slice(0, 3).join(", ")}` : "0",
      `${gone.length} of ${results.length}`,
      times.n ? `${fmt(times.median)} s (max ${fmt(times.max)} s)` : "–",
    ]);
  }
  return {
    table: {
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
    goals: rows.map((r) => `${r[0]}: ${r[2]} clean within 10 s (goal: all)`),
    notes,
  };
}
