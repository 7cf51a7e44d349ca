import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AirError, errorMessage } from "@air/core";
import { isAlive, readProc } from "./proc.ts";

/** File names inside a run directory. */
export const RUN_FILES = {
  pid: "run.pid.json",
  progress: "progress.json",
  config: "config.resolved.json",
} as const;

/** A process recorded in a pid file. */
export interface PidEntry {
  role: string;
  pid: number;
  pgid: number;
  startTime: number;
}

/** `<runDir>/run.pid.json`: the launcher and its children, while the run is alive. */
export interface PidFile {
  runName: string;
  runDir: string;
  launcher: PidEntry;
  children: PidEntry[];
  startedAt: string;
}

/** `<runDir>/progress.json`: the last completed step, for `--resume`. */
export interface Progress {
  lastCompletedStep: number;
  updatedAt: string;
  metrics: Record<string, number>;
}

function writeJsonAtomic(file: string, value: unknown): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(tmp, file);
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    return undefined;
  }
}

/** Writes the pid file of a run; `children` is rewritten as children start. */
export function writePidFile(runDir: string, value: PidFile): void {
  mkdirSync(runDir, { recursive: true });
  writeJsonAtomic(join(runDir, RUN_FILES.pid), value);
}

export function readPidFile(runDir: string): PidFile | undefined {
  return readJson<PidFile>(join(runDir, RUN_FILES.pid));
}

export function removePidFile(runDir: string): void {
  rmSync(join(runDir, RUN_FILES.pid), { force: true });
}

/** The launcher's own pid entry. */
export function selfEntry(): PidEntry {
  return {
    role: "launcher",
    pid: process.pid,
    pgid: process.pid,
    startTime: readProc(process.pid)?.startTime ?? 0,
  };
}

/** Entries of a pid file whose process still runs (same pid and start time). */
export function liveEntries(file: PidFile): PidEntry[] {
  return [file.launcher, ...file.children].filter((e) => isAlive(e.pid, e.startTime || undefined));
}

/**
 * Run directories under `outputDir` whose pid file names a live process.
 * @example liveRuns("/abs/outputs") // [{ runDir: "/abs/outputs/debug", file, live: [...] }]
 */
export function liveRuns(outputDir: string): Array<{ runDir: string; file: PidFile; live: PidEntry[] }> {
  if (!existsSync(outputDir)) return [];
  const out: Array<{ runDir: string; file: PidFile; live: PidEntry[] }> = [];
  for (const name of readdirSync(outputDir)) {
    const runDir = join(outputDir, name);
    const file = readPidFile(runDir);
    if (!file) continue;
    const live = liveEntries(file).filter((e) => e.pid !== process.pid);
    if (live.length > 0) out.push({ runDir, file, live });
  }
  return out;
}

export function writeProgress(runDir: string, progress: Progress): void {
  writeJsonAtomic(join(runDir, RUN_FILES.progress), progress);
}

/**
 * The last completed step recorded in a run directory, or undefined when none completed (no progress file).
 * A progress file that exists but cannot be read as one throws (resuming from a guess would retrain or skip
 * steps), naming the file.
 * @example readLastCompletedStep("outputs/quickstart") // 4
 */
export function readLastCompletedStep(runDir: string): number | undefined {
  const file = join(runDir, RUN_FILES.progress);
  if (!existsSync(file)) return undefined;
  let progress: unknown;
  try {
    progress = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new AirError(
      "CONFIG_INVALID",
      `${file} is not valid JSON (${errorMessage(error)}); fix or remove it`,
    );
  }
  const step = (progress as Partial<Progress> | null)?.lastCompletedStep;
  if (step === undefined) return undefined;
  if (typeof step !== "number" || !Number.isInteger(step) || step < 0)
    throw new AirError(
      "CONFIG_INVALID",
      `${file}: lastCompletedStep must be a step number (an integer >= 0), got ${JSON.stringify(step)}; fix or remove it`,
    );
  return step;
}

/** Writes the resolved config (root values and plugin specs) into the run directory. */
export function writeResolvedConfig(runDir: string, value: unknown): void {
  mkdirSync(runDir, { recursive: true });
  writeJsonAtomic(join(runDir, RUN_FILES.config), value);
}
