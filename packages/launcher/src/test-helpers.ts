import { afterEach } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "@air/core/testing";
import { type CheckResult, type PreflightOptions, preflightPlan, runPreflight } from "./preflight.ts";
import { descendants, isAlive, type ProcInfo, processesWithEnv } from "./proc.ts";
import { planOf } from "./run-plan.ts";
import { readPidFile } from "./rundir.ts";
import type { RunConfig } from "./sections.ts";
import { RUN_MARKER } from "./supervisor.ts";

/** Test-only helpers (not exported from the package). */
export const FIXTURES = resolve(import.meta.dir, "..", "fixtures");
export const FAKE_BIN = join(FIXTURES, "bin");
export const RL_ENTRY = resolve(import.meta.dir, "bin", "rl.ts");
export const REPO_ROOT = resolve(import.meta.dir, "..", "..", "..");

const tempDirs: string[] = [];

/** A fresh directory under the system temp dir, removed by `removeTempDirs`. */
export function tempDir(label = "run"): string {
  const dir = mkdtempSync(join(tmpdir(), `air-launcher-${label}-`));
  tempDirs.push(dir);
  return dir;
}

/** Removes every directory `tempDir` made in this test file (call it from afterAll). */
export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A port nothing listens on right now (`@air/core/testing`'s). */
export { freePort };

export interface RunFixture {
  dir: string;
  file: string;
  outputDir: string;
  runDir: string;
  port: number;
}

export interface FixtureOptions {
  runName?: string;
  maxSteps?: number;
  vllmMode?: string;
  trainerMode?: string;
  withTrainer?: boolean;
  policyDelayMs?: number;
  failExamples?: boolean;
  strayRejection?: boolean;
  /** The fixture env's close takes this long (a slow sandbox teardown). */
  envCloseDelayMs?: number;
  /** The fixture env's container is created this much later by a detached `docker create` (lands after teardown). */
  lateContainerMs?: number;
  containerImage?: string;
  startupTimeoutMs?: number;
  graceMs?: number;
  extra?: string;
  /** The launcher generates the prime-rl trainer TOML (no `config_file`). */
  generatedTrainerToml?: boolean;
  /** The top-level `logger = [...]` value (default: none). */
  loggers?: string;
}

/** Writes a run config (fake vllm, fake torchrun, fixture plugins) into a fresh temp dir. */
export async function writeFixtureConfig(options: FixtureOptions = {}): Promise<RunFixture> {
  const dir = tempDir();
  const port = await freePort();
  const masterPort = await freePort();
  const name = options.runName ?? `t${process.pid}-${Math.floor(Math.random() * 1e9)}`;
  const p = (f: string) => JSON.stringify(join(FIXTURES, "plugins", f));
  const toml = `
logger = ${options.loggers ?? "[]"}
[run]
name = "${name}"
output_dir = "out"
max_steps = ${options.maxSteps ?? 1}
log_level = "error"
[model]
name = "fake/model"
max_model_len = 4096
[orchestrator]
batch_size = 2
rollouts_per_example = 2
max_turns = 1
max_off_policy_steps = 0
[env]
plugin = ${p("env.ts")}
fail_examples = ${options.failExamples ?? false}
stray_rejection = ${options.strayRejection ?? false}
${options.envCloseDelayMs ? `close_delay_ms = ${options.envCloseDelayMs}` : ""}
${options.lateContainerMs ? `late_container_ms = ${options.lateContainerMs}` : ""}
${options.containerImage ? `container_image = "${options.containerImage}"` : ""}
[policy]
plugin = ${p("policy.ts")}
delay_ms = ${options.policyDelayMs ?? 0}
[reward]
plugin = ${p("reward.ts")}
[advantage]
plugin = ${p("advantage.ts")}
[strategy]
plugin = ${p("strategy.ts")}
[inference]
kind = "vllm"
port = ${port}
startup_timeout_ms = ${options.startupTimeoutMs ?? 20_000}
env = { FAKE_VLLM_MODE = "${options.vllmMode ?? "ok"}", FAKE_CRASH_AFTER_MS = "1500" }
[trainer_process]
kind = "${options.withTrainer === false ? "none" : "prime-rl"}"
${options.withTrainer === false || options.generatedTrainerToml ? "" : `config_file = ${JSON.stringify(join(FIXTURES, "trainer.toml"))}`}
master_port = ${masterPort}
env = { FAKE_TRAINER_MODE = "${options.trainerMode ?? "ok"}", FAKE_CRASH_AFTER_MS = "1500" }
[launcher]
grace_ms = ${options.graceMs ?? 3000}
${options.extra ?? ""}
`;
  const file = join(dir, "run.toml");
  writeFileSync(file, toml);
  return { dir, file, outputDir: join(dir, "out"), runDir: join(dir, "out", name), port };
}

/** PATH with the fake vllm / torchrun / nvidia-smi first. */
export function fakePath(): string {
  return `${FAKE_BIN}:${process.env.PATH ?? ""}`;
}

export interface LauncherRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Every process seen below the launcher while it ran. */
  seen: Map<number, ProcInfo>;
  /** Resolves with the exit code; rejects after `timeoutMs` (then the launcher is killed). */
  done: Promise<number | null>;
  /** Resolves once stderr matches `pattern`, rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
}

/** Starts `bun rl.ts <args>` as a real child, records its process tree while it runs. */
export function startLauncher(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): LauncherRun {
  const child = spawn(process.execPath, [RL_ENTRY, ...args], {
    cwd: options.cwd ?? tmpdir(),
    env: { ...process.env, PATH: fakePath(), ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => {
    out += String(d);
  });
  child.stderr?.on("data", (d) => {
    err += String(d);
  });
  const seen = new Map<number, ProcInfo>();
  const sample = setInterval(() => {
    if (child.pid) for (const p of descendants(child.pid)) seen.set(p.pid, p);
  }, 25);
  const timeoutMs = options.timeoutMs ?? 60_000;
  const done = new Promise<number | null>((resolveDone, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`launcher did not exit within ${timeoutMs} ms; stderr:\n${err}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      clearInterval(sample);
      resolveDone(code);
    });
  });
  const waitFor = async (pattern: RegExp, waitMs = 30_000) => {
    const deadline = Date.now() + waitMs;
    while (!pattern.test(err)) {
      if (child.exitCode !== null) throw new Error(`launcher exited before ${pattern}; stderr:\n${err}`);
      if (Date.now() > deadline) throw new Error(`no ${pattern} in stderr after ${waitMs} ms:\n${err}`);
      await Bun.sleep(25);
    }
  };
  return { child, stdout: () => out, stderr: () => err, seen, done, waitFor };
}

/** Resolves once `file` contains `text`; rejects after `timeoutMs`. */
export async function waitForText(file: string, text: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(existsSync(file) && readFileSync(file, "utf8").includes(text))) {
    if (Date.now() > deadline) throw new Error(`no "${text}" in ${file} after ${timeoutMs} ms`);
    await Bun.sleep(25);
  }
}

/** Processes of a run still alive: any seen in its tree, and any carrying its marker. */
export function survivors(run: LauncherRun, runDir: string): string[] {
  const alive = [...run.seen.values()].filter((p) => isAlive(p.pid, p.startTime));
  const marked = processesWithEnv(RUN_MARKER, runDir);
  const started = [...run.stderr().matchAll(/ running \(pid (\d+)\)/g)].map((m) => Number(m[1]));
  const reported = started.filter((pid) => isAlive(pid)).map((pid) => `${pid} (started by the launcher)`);
  return [...[...alive, ...marked].map((p) => `${p.pid} ${p.comm}`), ...reported];
}

/** Kills whatever a failed test left (by the run's marker), so one failure does not leak into others. */
export function killSurvivors(run: LauncherRun | undefined, runDir: string): void {
  const victims = [...(run ? run.seen.values() : []), ...processesWithEnv(RUN_MARKER, runDir)];
  for (const p of victims) {
    if (isAlive(p.pid, p.startTime)) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {}
    }
  }
  if (run?.child.exitCode === null) run.child.kill("SIGKILL");
}

/** Preflight on a config as `rl check` runs it: the config's plan, its GPUs planned against `options.env`. */
export async function preflightOf(config: RunConfig, options: PreflightOptions = {}): Promise<CheckResult[]> {
  return runPreflight(await preflightPlan(planOf(config), options.env), options);
}

/** kill -9 of the launcher and of every child group its pid file names (tiny inference, tiny trainer): nothing gets to clean up. */
export function killEverything(run: LauncherRun, runDir: string): void {
  const groups = readPidFile(runDir)?.children.map((c) => c.pgid) ?? [];
  run.child.kill("SIGKILL");
  for (const g of groups)
    try {
      process.kill(-g, "SIGKILL");
    } catch {}
}

/**
 * The launcher run a test is watching (`runs.current = { run, runDir }`): after each test, whatever it left alive of
 * that run is killed (`killSurvivors`), pass or fail.
 */
export function killSurvivorsAfterEach(): { current: { run?: LauncherRun; runDir?: string } } {
  const runs: { current: { run?: LauncherRun; runDir?: string } } = { current: {} };
  afterEach(() => {
    if (runs.current.runDir) killSurvivors(runs.current.run, runs.current.runDir);
    runs.current = {};
  });
  return runs;
}
