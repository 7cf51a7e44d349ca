import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** Test-only helpers: a short real `rl` run with the scripted policy, and the launcher's bins. */
export const REPO = resolve(import.meta.dir, "../../..");
export const BINS = resolve(REPO, "packages/launcher/src/bin");
export const NOISY_ROOT = resolve(import.meta.dir, "../fixtures/mlgym");

export interface ScriptedRun {
  /** Folder the config and the outputs go to. */
  dir: string;
  name: string;
  mlgymRoot: string;
  task: string;
  commands: string[];
  maxTurns: number;
  /** The runtime (default local, bwrap); docker uses the test image `air-mlgym-test:latest`. */
  runtime?: "local" | "docker";
}

/**
 * Runs `bun run rl` (the launcher's bin, a real process) for one step on `task` with the scripted policy and the
 * `none` trainer, local runtime; returns the run dir. Throws with the output when rl fails.
 * @example const runDir = scriptedRun({ dir, name: "qs", mlgymRoot: REPO, task: "apartmentRent", commands, maxTurns: 3 });
 */
export function scriptedRun(run: ScriptedRun): string {
  const file = join(run.dir, `${run.name}.toml`);
  writeFileSync(
    file,
    `logger = [{ plugin = "sqlite" }]
[run]
name = "${run.name}"
output_dir = "${join(run.dir, "out")}"
max_steps = 1
seed = 1
[model]
name = "none"
[orchestrator]
batch_size = 2
rollouts_per_example = 2
max_concurrent_rollouts = 2
max_turns = ${run.maxTurns}
[env]
plugin = "mlgym"
mlgym_root = "${run.mlgymRoot}"
tasks = ["${run.task}"]
num_examples_per_task = 1
runtime = "${run.runtime ?? "local"}"
docker = { image = "air-mlgym-test:latest", pool_size = 2 }
[policy]
plugin = "scripted"
commands = ${JSON.stringify(run.commands)}
[reward]
plugin = "delta"
[advantage]
plugin = "grpo"
[strategy]
plugin = "branching"
[trainer]
plugin = "none"
`,
  );
  const r = Bun.spawnSync(["bun", join(BINS, "rl.ts"), file], {
    stdout: "pipe",
    stderr: "pipe",
    timeout: 180_000,
  });
  if (r.exitCode !== 0)
    throw new Error(`rl ${file} exited ${r.exitCode}:\n${r.stdout.toString()}\n${r.stderr.toString()}`);
  return join(run.dir, "out", run.name);
}

/** Runs `bun run replay` with `args`; its exit code and output. */
export function replayCli(args: string[], timeoutMs = 240_000) {
  const r = Bun.spawnSync(["bun", join(BINS, "replay.ts"), ...args], {
    stdout: "pipe",
    stderr: "pipe",
    timeout: timeoutMs,
  });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}
