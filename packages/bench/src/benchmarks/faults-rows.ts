import type Docker from "dockerode";
import type { Table } from "../report.ts";
import { leftovers, readPidFile, until } from "./faults-util.ts";

/** One run of a fault other than a signal: how it ended and what it left or lost. */
export interface Outcome {
  /** It ended as the fault's goal says (exit code, error message). */
  expected: boolean;
  /** Processes or containers of the run still there 10 s after the launcher exited. */
  left: string[];
  /** Training rollouts missing from the store / recorded twice (undefined: not applicable). */
  lost?: number;
  doubled?: number;
  /** prime-rl steps the trainer trained more than once / never (undefined: not applicable). */
  trainedTwice?: number;
  untrained?: number;
  /** Free text: exit code, restarts, time the fault took to heal. */
  detail: string;
  /** Where its logs were kept, when it missed its goal. */
  kept?: string;
}

/**
 * Collects every pid the run's pid file names while it runs (the launcher, each child, a restarted trainer), so
 * what is left after the run can be named. Returns the map and a function that stops watching.
 */
export function watchPids(runDir: string): { seen: Map<number, string>; stop: () => void } {
  const seen = new Map<number, string>();
  const timer = setInterval(() => {
    const file = readPidFile(runDir);
    if (!file) return;
    seen.set(file.launcher.pid, "launcher");
    for (const c of file.children) seen.set(c.pid, c.role ?? "child");
  }, 200);
  return { seen, stop: () => clearInterval(timer) };
}

/** What of the run is still there 10 s after its launcher exited ([] once everything is gone). */
export async function leftAfterExit(
  docker: Docker | undefined,
  runDir: string,
  seen: Map<number, string>,
): Promise<string[]> {
  const gone = async () => (await leftovers(docker, runDir, seen)).length === 0;
  return (await until(gone, 10_000)) ? [] : leftovers(docker, runDir, seen);
}

const sum = (values: Array<number | undefined>) =>
  values.some((v) => v !== undefined) ? String(values.reduce<number>((a, v) => a + (v ?? 0), 0)) : "–";

/** A row of the "other faults" table from the runs of one fault. */
export function outcomeRow(fault: string, runs: Outcome[]): string[] {
  const left = runs.flatMap((r) => r.left);
  const details = [...new Set(runs.map((r) => r.detail))];
  return [
    fault,
    String(runs.length),
    `${runs.filter((r) => r.expected).length} of ${runs.length}`,
    left.length ? `${left.length}: ${left.slice(0, 3).join(", ")}` : "0",
    `${sum(runs.map((r) => r.lost))} / ${sum(runs.map((r) => r.doubled))}`,
    `${sum(runs.map((r) => r.trainedTwice))} / ${sum(runs.map((r) => r.untrained))}`,
    details.slice(0, 3).join("; ") + (details.length > 3 ? "; …" : ""),
  ];
}

/** The "other faults" table. */
export function outcomeTable(rows: string[][]): Table {
  return {
    title: "Other faults: the daemon, the trainer, the disk",
    headers: [
      "fault",
      "runs",
      "ended as the goal says",
      "left 10 s after exit",
      "rollouts lost / doubled",
      "steps trained twice / never",
      "detail",
    ],
    rows,
  };
}
