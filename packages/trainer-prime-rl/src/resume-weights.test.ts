import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { primeRlConfigSchema } from "./options.ts";
import { lastStableStep } from "./restart.ts";
import {
  finishedWeightsDir,
  pruneSetAside,
  resumeWeights,
  resumeWeightsDir,
  setAsideForRestart,
} from "./resume-weights.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** An air run dir whose prime-rl run dir has finished broadcasts of `steps` (model.pt holds "v<step>"). */
function runWith(steps: number[]) {
  const runDir = mkdtempSync(join(tmpdir(), "air-resume-weights-"));
  dirs.push(runDir);
  const prime = join(runDir, "prime-rl");
  for (const s of steps) {
    const dir = join(prime, "broadcasts", `step_${s}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "model.pt"), `v${s}`);
    writeFileSync(join(dir, "STABLE"), "");
  }
  const config = primeRlConfigSchema.parse({});
  return { config, ctx: { runDir, configDir: runDir }, prime };
}

describe("weights set aside before a trainer restart", () => {
  test("finished broadcasts from the restart's checkpoint on move to resume-weights; the plugin hands those out", () => {
    const { config, ctx, prime } = runWith([1, 2, 3]);
    // an unfinished broadcast (no STABLE) is the trainer's own, not moved
    mkdirSync(join(prime, "broadcasts", "step_4"), { recursive: true });
    expect(setAsideForRestart(config, ctx, 2)).toEqual([
      resumeWeightsDir(prime, 2),
      resumeWeightsDir(prime, 3),
    ]);
    expect(existsSync(join(prime, "broadcasts", "step_1", "STABLE"))).toBe(true);
    expect(existsSync(join(prime, "broadcasts", "step_2"))).toBe(false);
    expect(existsSync(join(prime, "broadcasts", "step_4"))).toBe(true);
    expect(readFileSync(join(resumeWeightsDir(prime, 3), "model.pt"), "utf8")).toBe("v3");
    expect(finishedWeightsDir(prime, 1)).toBe(join(prime, "broadcasts", "step_1"));
    expect(finishedWeightsDir(prime, 3)).toBe(resumeWeightsDir(prime, 3));
    expect(finishedWeightsDir(prime, 4)).toBeUndefined();
    // set-aside steps still count as finished: a second crash before the rebroadcast restarts from the same point
    expect(lastStableStep(prime)).toBe(3);
    // the restarted trainer broadcasts step 2 again into a new dir; a second restart keeps the first copy
    mkdirSync(join(prime, "broadcasts", "step_2"), { recursive: true });
    writeFileSync(join(prime, "broadcasts", "step_2", "model.pt"), "v2 again");
    writeFileSync(join(prime, "broadcasts", "step_2", "STABLE"), "");
    expect(setAsideForRestart(config, ctx, 2)).toEqual([]);
    expect(finishedWeightsDir(prime, 2)).toBe(resumeWeightsDir(prime, 2));
    // a fresh restart (no checkpoint) sets aside everything, step 0 included
    expect(setAsideForRestart(config, ctx, undefined)).toEqual([resumeWeightsDir(prime, 1)]);
  });

  test("pruning drops set-aside steps before the one handed out; --resume drops a restart's leftovers past its step", () => {
    const { config, ctx, prime } = runWith([2, 3, 4]);
    setAsideForRestart(config, ctx, 2);
    expect(pruneSetAside(prime, 3)).toEqual([resumeWeightsDir(prime, 2)]);
    expect(existsSync(resumeWeightsDir(prime, 3))).toBe(true);
    // --resume at air step 3 (prime-rl step 3): step 4's copy would otherwise count as a finished step
    expect(resumeWeights(config, ctx, 3)?.path).toBe(resumeWeightsDir(prime, 3));
    expect(existsSync(resumeWeightsDir(prime, 4))).toBe(false);
    expect(lastStableStep(prime)).toBe(3);
  });
});
