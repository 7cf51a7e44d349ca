import { afterAll, afterEach, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  freePort,
  killSurvivors,
  type LauncherRun,
  REPO_ROOT,
  removeTempDirs,
  startLauncher,
  survivors,
  tempDir,
} from "./test-helpers.ts";

// prime-rl's filesystem broadcast writes `broadcasts/step_N` in place (`save_file` truncates a file already there,
// STABLE stays), and a trainer restarted by `max_restarts` broadcasts its checkpoint step again at start. The CPU
// stand-in is told to write as prime-rl does (AIR_TINY_BROADCAST_IN_PLACE=1), to pause half-way through that start
// broadcast (AIR_TINY_BROADCAST_SLOW_S) and to die after step 2's broadcast and checkpoint, before its metrics row
// (AIR_TINY_STOP_AFTER_STEP): the plugin waits `metrics_wait_ms` for that row, which never comes, then hands the
// server step 2's weights — while the restarted trainer is half-way through rewriting them.

afterAll(removeTempDirs);

const CONFIG = join(REPO_ROOT, "configs", "dataset", "debug.toml");
/**
 * The restarted trainer's pause half-way through rewriting step 2 (s). Measured here: the rewrite began 6 s after
 * step 2's STABLE (the restart), and the plugin handed step 2 out `METRICS_WAIT_MS` after that STABLE.
 */
const SLOW_S = 75;
/** The plugin's wait for step 2's metrics row: after the restart has begun the rewrite, before it ends. */
const METRICS_WAIT_MS = 30_000;
let current: { run?: LauncherRun; runDir?: string } = {};
afterEach(() => {
  if (current.runDir) killSurvivors(current.run, current.runDir);
  current = {};
});

/** The `broadcast_in_place` events of the trainer log (every trainer of the run, in order). */
function inPlaceEvents(runDir: string): Array<{ phase: string; step: number; rewrite?: boolean; t: number }> {
  const log = join(runDir, "logs", "trainer.log");
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l.startsWith('{"event": "broadcast_in_place"'))
    .map((l) => JSON.parse(l));
}

test.each([
  ["full weights (model.pt)", []],
  [
    "a LoRA adapter",
    [
      "--trainer.lora=true",
      "--inference.lora.enabled=true",
      '--policy.weight_update="lora"',
      '--policy.lora_name="air-lora"',
    ],
  ],
])(
  "a restarted trainer rewrites step 2's broadcast in place, slowly, while the server loads step 2 — %s: the server loads whole weights, the run completes, every step trained once",
  async (_kind: string, extra: string[]) => {
    const out = tempDir("rebroadcast");
    const runDir = join(out, "dataset-debug");
    const port = await freePort();
    const env = {
      AIR_TINY_BROADCAST_IN_PLACE: "1",
      AIR_TINY_BROADCAST_SLOW_S: String(SLOW_S),
      AIR_TINY_STOP_AFTER_STEP: "2",
      AIR_TINY_STOP_ONCE: join(tempDir("stop-once"), "stopped"),
    };
    const run = startLauncher(
      [
        CONFIG,
        "--run.max_steps=5",
        `--run.output_dir="${out}"`,
        `--inference.port=${port}`,
        `--policy.base_url="http://127.0.0.1:${port}/v1"`,
        "--trainer_process.max_restarts=1",
        ...extra,
        `--trainer.metrics_wait_ms=${METRICS_WAIT_MS}`,
        `--trainer_process.env={ ${Object.entries(env)
          .map(([k, v]) => `${k} = "${v}"`)
          .join(", ")} }`,
      ],
      { cwd: out, timeoutMs: 420_000 },
    );
    current = { run, runDir };
    // The moment the plugin hands out step 2's weights (it warns that step 1's row never came, then returns), seen
    // against the restarted trainer's rewrite of step 2.
    const handOut = "step 1: no trainer loss in its step line";
    let during: boolean | undefined;
    let handOutAt = 0;
    while (run.child.exitCode === null && during === undefined) {
      if (run.stderr().includes(handOut)) {
        handOutAt = Date.now() / 1000;
        const events = inPlaceEvents(runDir).filter((e) => e.step === 2);
        // begin + end by the first trainer, then the restarted trainer's begin (and end, once done)
        during = events.length === 3 && events[2]?.phase === "begin";
      }
      await Bun.sleep(50);
    }
    if (!during)
      process.stderr.write(
        `step 2 handed out at ${handOutAt}, not during the rewrite: ${JSON.stringify(inPlaceEvents(runDir))}\n`,
      );
    const code = await run.done;
    if (code !== 0) process.stderr.write(run.stderr().slice(-4000));
    expect(code).toBe(0);
    expect(during).toBe(true);
    expect(run.stderr()).toContain("restarting the trainer (restart 1 of 1)");
    const log = readFileSync(join(runDir, "logs", "trainer.log"), "utf8");
    expect(log).toContain(
      "stopping (kill) after the broadcast and checkpoint of step 2, before its metrics row",
    );
    // the restarted trainer resumed from checkpoint 2 and rewrote step 2 at start, over a finished broadcast only
    // when nothing set it aside (the fix moves it to resume-weights/ first)
    expect(log.match(/"event": "ready", "step": \d+/g)).toEqual([
      '"event": "ready", "step": 1',
      '"event": "ready", "step": 3',
    ]);
    const rewrite = inPlaceEvents(runDir).filter((e) => e.step === 2 && e.phase === "begin");
    expect(rewrite.map((e) => e.rewrite)).toEqual([false, false]);
    // every step trained once: step 2's row died with the first trainer (written after the checkpoint)
    const rows = readFileSync(join(runDir, "prime-rl", "metrics.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { step: number }).step);
    expect(rows).toEqual([1, 3, 4, 5]);
    expect(run.stderr()).toContain("run completed: ");
    expect(survivors(run, runDir)).toEqual([]);
  },
  480_000,
);
