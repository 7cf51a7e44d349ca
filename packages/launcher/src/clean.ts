import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { sleep } from "@air/core";
import { removeRunContainers } from "./containers.ts";
import { groupMembers, isAlive, killGroup, killPid } from "./proc.ts";
import { readPidFile, removePidFile } from "./rundir.ts";
import { killMarked } from "./supervisor.ts";

export interface CleanReport {
  /** One line per thing stopped or removed. */
  actions: string[];
}

async function waitGone(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!check()) return true;
    await sleep(50);
  }
  return !check();
}

/**
 * Stops what earlier runs under `outputDir` left behind: the launcher and child process groups named in
 * each run's pid file (checked by pid and start time, so a reused pid is never hit), processes carrying
 * the run's `AIR_RUN_DIR` marker, and containers labelled with the run's name. Never matches by
 * process or container name.
 * @example const { actions } = await cleanOutputDir("outputs");
 */
export async function cleanOutputDir(outputDir: string, graceMs = 10_000): Promise<CleanReport> {
  const root = resolve(outputDir);
  const actions: string[] = [];
  if (!existsSync(root)) return { actions };
  const runDirs = readdirSync(root)
    .map((name) => join(root, name))
    .filter((p) => {
      try {
        return statSync(p).isDirectory();
      } catch {
        return false;
      }
    });
  for (const runDir of runDirs) actions.push(...(await cleanRunDir(runDir, graceMs)));
  return { actions };
}

/** The run's replay dirs (`<run dir>/replays/*`), each the run dir (and container label) of one replay. */
function replayDirs(runDir: string): string[] {
  const root = join(runDir, "replays");
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(root, e.name));
}

/**
 * Stops what one run left behind: the launcher and child process groups in its pid file, processes carrying its
 * `AIR_RUN_DIR` marker, and containers labelled with its run dir or one of its replay dirs; then removes the pid file. Used by `rl clean`
 * and by the run's reaper when the launcher died.
 * @example const actions = await cleanRunDir("/abs/outputs/quickstart");
 */
export async function cleanRunDir(dir: string, graceMs = 10_000): Promise<string[]> {
  const runDir = resolve(dir);
  const actions: string[] = [];
  const file = readPidFile(runDir);
  if (file) {
    const launcher = file.launcher;
    if (isAlive(launcher.pid, launcher.startTime || undefined)) {
      killPid(launcher.pid, "SIGTERM");
      actions.push(`sent SIGTERM to launcher pid ${launcher.pid} of ${runDir}`);
      if (!(await waitGone(() => isAlive(launcher.pid, launcher.startTime || undefined), graceMs))) {
        killPid(launcher.pid, "SIGKILL");
        actions.push(`killed launcher pid ${launcher.pid} (ignored SIGTERM)`);
      }
    }
    for (const child of file.children) {
      if (!isAlive(child.pid, child.startTime || undefined) && groupMembers(child.pgid).length === 0)
        continue;
      killGroup(child.pgid, "SIGTERM");
      actions.push(`sent SIGTERM to ${child.role} process group ${child.pgid}`);
      if (!(await waitGone(() => groupMembers(child.pgid).length > 0, graceMs))) {
        killGroup(child.pgid, "SIGKILL");
        actions.push(`killed ${child.role} process group ${child.pgid} (ignored SIGTERM)`);
      }
    }
  }
  for (const p of await killMarked(runDir))
    actions.push(`killed stray process ${p.pid} (${p.comm}) of ${runDir}`);
  const ids = await removeRunContainers(runDir);
  for (const id of ids) actions.push(`removed container ${id.slice(0, 12)} of ${runDir}`);
  // `bun run replay` (and the dashboard's Replay) run the env with `<run dir>/replays/<rollout>-<time>` as its run
  // dir, so their containers carry that label; a replay killed with -9 left them.
  for (const replayDir of replayDirs(runDir))
    for (const id of await removeRunContainers(replayDir))
      actions.push(`removed container ${id.slice(0, 12)} of replay ${replayDir}`);
  if (file) {
    removePidFile(runDir);
    actions.push(`removed pid file of ${runDir}`);
  }
  return actions;
}
