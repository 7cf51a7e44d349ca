import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { leftAfterExit, type Outcome, watchPids } from "./faults-rows.ts";
import { checkStore, runCounts, startRl } from "./faults-run.ts";
import { keepLogs, progressStep, REPO, RL } from "./faults-util.ts";

/** Size of the tmpfs the run writes into: full after two or three quickstart steps (~2 MiB each). */
const SMALL = "6m";
/** Its size once "space is back". */
const LARGE = "64m";
const RESUMED_STEPS = 6;

function run(argv: string[]): { ok: boolean; text: string } {
  const out = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
  return { ok: out.exitCode === 0, text: `${out.stdout.toString()}${out.stderr.toString()}`.trim() };
}

/**
 * The quickstart (local runtime, 40 steps) with its output dir on a 6 MiB tmpfs mounted for the run: it must fail
 * with exit 1 and a message naming the full disk, its store must stay readable (SQLite integrity_check ok), and
 * once the tmpfs is grown to 64 MiB `rl --resume` must finish 6 steps with every step's rollouts once in one store
 * run and every prime-rl step trained once. The tmpfs is unmounted afterwards, whatever happened.
 */
export async function diskFullRun(): Promise<Outcome> {
  const base = mkdtempSync(join(tmpdir(), "air-bench-disk-"));
  const mnt = join(base, "mnt");
  const logs = join(base, "logs");
  mkdirSync(mnt);
  mkdirSync(logs);
  const mounted = run(["mount", "-t", "tmpfs", "-o", `size=${SMALL}`, "tmpfs", mnt]);
  if (!mounted.ok) {
    rmSync(base, { recursive: true, force: true });
    throw new Error(`cannot mount a tmpfs (needs root): ${mounted.text}`);
  }
  const runDir = join(mnt, "q");
  try {
    const first = await startRl(mnt, "q", ["--run.max_steps", "40"], { logDir: logs });
    const pids = watchPids(runDir);
    const code = await first.exited;
    pids.stop();
    const left = await leftAfterExit(undefined, runDir, pids.seen);
    const named = /the disk under .* is full/.test(first.text());
    let readable = "unreadable";
    try {
      readable = checkStore(runDir, 8, 0).integrity;
    } catch (error) {
      readable = `unreadable (${String(error)})`;
    }
    const failedAt = progressStep(runDir);
    const grown = run(["mount", "-o", `remount,size=${LARGE}`, mnt]);
    if (!grown.ok) throw new Error(`cannot grow the tmpfs: ${grown.text}`);
    const resumed = await startRl(mnt, "q", ["--run.max_steps", String(RESUMED_STEPS), "--resume"], {
      logDir: logs,
    });
    const pids2 = watchPids(runDir);
    const resumeCode = await resumed.exited;
    pids2.stop();
    left.push(...(await leftAfterExit(undefined, runDir, pids2.seen)));
    const { store, counts } = runCounts(runDir, RESUMED_STEPS);
    const expected = code === 1 && named && readable === "ok" && resumeCode === 0 && store.runs === 1;
    const outcome: Outcome = {
      expected,
      left,
      ...counts,
      detail:
        `full: exit ${code}${named ? ", message names the full disk" : ", no full-disk message"}, store ${readable}, ` +
        `progress at step ${failedAt ?? "none"}; --resume: exit ${resumeCode}, ${store.runs} store run(s)`,
    };
    if (!expected || left.length > 0 || store.lost + store.doubled > 0)
      outcome.kept = keepLogs(logs, runDir, "disk-full");
    return outcome;
  } finally {
    Bun.spawnSync(["bun", RL, "clean", mnt, "--grace-ms", "1000"], {
      cwd: REPO,
      stdout: "ignore",
      stderr: "ignore",
    });
    if (!run(["umount", mnt]).ok) run(["umount", "-l", mnt]);
    rmSync(base, { recursive: true, force: true });
  }
}
