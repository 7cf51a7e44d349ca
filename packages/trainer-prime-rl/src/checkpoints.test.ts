import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  checkpointComplete,
  checkpointSteps,
  incompleteCheckpointSteps,
  pruneStepDirs,
  resumeCheckpoint,
} from "./checkpoints.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function runDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "air-ckpt-"));
  dirs.push(dir);
  return dir;
}

/** What prime-rl's trainer leaves after `step`: batch, broadcast + STABLE, and (optionally) a checkpoint. */
function trained(dir: string, step: number, checkpoint: boolean): void {
  mkdirSync(join(dir, "rollouts", `step_${step}`), { recursive: true });
  writeFileSync(join(dir, "rollouts", `step_${step}`, "rank_0.bin"), "batch");
  mkdirSync(join(dir, "broadcasts", `step_${step}`), { recursive: true });
  writeFileSync(join(dir, "broadcasts", `step_${step}`, "model.safetensors"), "w".repeat(1000));
  writeFileSync(join(dir, "broadcasts", `step_${step}`, "STABLE"), "");
  if (checkpoint) checkpoint_(dir, step);
}

/** A complete checkpoint as DCP leaves one: the payload, then `.metadata`. `partial`: killed before `.metadata`. */
function checkpoint_(dir: string, step: number, partial = false): void {
  const trainer = join(dir, "checkpoints", `step_${step}`, "trainer");
  mkdirSync(trainer, { recursive: true });
  writeFileSync(join(trainer, "__0_0.distcp"), "payload");
  if (!partial) writeFileSync(join(trainer, ".metadata"), "metadata");
}

const names = (dir: string) =>
  existsSync(dir) ? readdirSync(dir).sort((a, b) => Number(a.slice(5)) - Number(b.slice(5))) : [];

describe("trainer checkpoints and resume points", () => {
  test("step 0 (the startup broadcast) and a step dir without trainer/ are no checkpoint", () => {
    const dir = runDir();
    mkdirSync(join(dir, "broadcasts", "step_0"), { recursive: true });
    writeFileSync(join(dir, "broadcasts", "step_0", "STABLE"), "");
    checkpoint_(dir, 0);
    expect(resumeCheckpoint(dir, 0)).toBeUndefined();
    mkdirSync(join(dir, "checkpoints", "step_2"), { recursive: true });
    expect(checkpointSteps(dir)).toEqual([]);
    checkpoint_(dir, 2);
    checkpoint_(dir, 5);
    expect(checkpointSteps(dir)).toEqual([2, 5]);
    expect(resumeCheckpoint(dir, 4)).toBe(2);
    expect(resumeCheckpoint(dir, 9)).toBe(5);
    expect(resumeCheckpoint(dir, 1)).toBeUndefined();
  });

  test("a checkpoint without .metadata (killed mid-save, after its STABLE) does not count: the newest complete one does", () => {
    const dir = runDir();
    for (let step = 1; step <= 4; step++) trained(dir, step, step <= 3);
    checkpoint_(dir, 4, true);
    expect(checkpointSteps(dir)).toEqual([1, 2, 3]);
    expect(incompleteCheckpointSteps(dir)).toEqual([4]);
    expect(checkpointComplete(dir, 4)).toBe(false);
    // the restart point after STABLE 4: checkpoint 3, and the batch of step 4 stays for training again
    expect(resumeCheckpoint(dir, 4)).toBe(3);
    pruneStepDirs({ runDir: dir, outputDir: dir, newest: 4, keepBroadcasts: 2 });
    expect(names(join(dir, "rollouts"))).toContain("step_4");
    checkpoint_(dir, 4);
    expect(resumeCheckpoint(dir, 4)).toBe(4);
  });
});

describe("pruneStepDirs: disk use stays bounded", () => {
  test("50 steps with a checkpoint every 5 (keep_last 2 done by the trainer): 2 broadcasts, the batches after the oldest checkpoint", () => {
    const dir = runDir();
    let most = 0;
    for (let step = 1; step <= 50; step++) {
      trained(dir, step, step % 5 === 0);
      // prime-rl's keep_last = 2
      const ckpts = checkpointSteps(dir);
      for (const s of ckpts.slice(0, -2)) rmSync(join(dir, "checkpoints", `step_${s}`), { recursive: true });
      pruneStepDirs({ runDir: dir, outputDir: dir, newest: step, keepBroadcasts: 2 });
      most = Math.max(most, names(join(dir, "broadcasts")).length + names(join(dir, "rollouts")).length);
    }
    expect(names(join(dir, "broadcasts"))).toEqual(["step_49", "step_50"]);
    // checkpoints 45 and 50 are kept: a restart from 45 trains 46..50 again, so those batches stay
    expect(checkpointSteps(dir)).toEqual([45, 50]);
    expect(names(join(dir, "rollouts"))).toEqual(["step_46", "step_47", "step_48", "step_49", "step_50"]);
    expect(most).toBeLessThanOrEqual(2 + 10);
  });

  test("without checkpoints every batch stays (a restart from the base weights trains them all again)", () => {
    const dir = runDir();
    for (let step = 1; step <= 6; step++) trained(dir, step, false);
    const removed = pruneStepDirs({ runDir: dir, outputDir: dir, newest: 6, keepBroadcasts: 3 });
    expect(removed.every((p) => p.includes("broadcasts"))).toBe(true);
    expect(names(join(dir, "broadcasts"))).toEqual(["step_4", "step_5", "step_6"]);
    expect(names(join(dir, "rollouts")).length).toBe(6);
  });

  test("broadcasts newer than the step whose weights arrived (trainer ahead) and unfinished ones do not count", () => {
    const dir = runDir();
    for (let step = 1; step <= 5; step++) trained(dir, step, true);
    rmSync(join(dir, "broadcasts", "step_4", "STABLE"));
    pruneStepDirs({ runDir: dir, outputDir: dir, newest: 4, keepBroadcasts: 2 });
    // newest with STABLE at or before 4: 3 and 2 are kept; 4 (no STABLE yet) and 5 (ahead) are not touched
    expect(names(join(dir, "broadcasts"))).toEqual(["step_2", "step_3", "step_4", "step_5"]);
  });
});
