import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import trainerNone from "@air/trainer-none";
import { resolveConfig } from "./cli.ts";
import { resumeWeights } from "./resume.ts";
import { planOf } from "./run-plan.ts";
import { REPO_ROOT } from "./test-helpers.ts";

const out = mkdtempSync(join(tmpdir(), "air-resume-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("resumeWeights", () => {
  test("finds the finished broadcast of the last completed step, and only that", async () => {
    const config = await resolveConfig(join(REPO_ROOT, "configs", "quickstart.toml"), [
      `--run.output_dir="${out}"`,
    ]);
    const prime = join(out, "quickstart", "prime-rl");
    const broadcast = join(prime, "broadcasts", "step_3");
    mkdirSync(broadcast, { recursive: true });
    writeFileSync(join(broadcast, "model.safetensors"), "v3");
    expect(resumeWeights(planOf(config).config.plugins.trainer, planOf(config).launch, 3)).toBeUndefined();
    writeFileSync(join(broadcast, "STABLE"), "");
    // set aside (one rename) where the resumed trainer, which broadcasts step 3 again in place, never writes
    const kept = join(prime, "resume-weights", "step_3");
    expect(resumeWeights(planOf(config).config.plugins.trainer, planOf(config).launch, 3)).toEqual({
      version: 3,
      path: kept,
      kind: "full",
    });
    expect(existsSync(broadcast)).toBe(false);
    expect(readFileSync(join(kept, "model.safetensors"), "utf8")).toBe("v3");
    // asked again (another node, a second --resume): found there
    expect(resumeWeights(planOf(config).config.plugins.trainer, planOf(config).launch, 3)).toEqual({
      version: 3,
      path: kept,
      kind: "full",
    });
    expect(resumeWeights(planOf(config).config.plugins.trainer, planOf(config).launch, 4)).toBeUndefined();
    expect(resumeWeights(planOf(config).config.plugins.trainer, planOf(config).launch, 0)).toBeUndefined();
  });

  test("a run without the prime-rl transport resumes from the base weights", async () => {
    const config = await resolveConfig(join(REPO_ROOT, "configs", "quickstart.toml"), [
      `--run.output_dir="${out}"`,
    ]);
    const broadcast = join(out, "quickstart", "prime-rl", "broadcasts", "step_2");
    mkdirSync(broadcast, { recursive: true });
    writeFileSync(join(broadcast, "STABLE"), "");
    expect(resumeWeights(planOf(config).config.plugins.trainer, planOf(config).launch, 2)?.version).toBe(2);
    config.plugins.trainer = { ...config.plugins.trainer, spec: "none", definition: trainerNone };
    expect(resumeWeights(planOf(config).config.plugins.trainer, planOf(config).launch, 2)).toBeUndefined();
  });

  test("empty steps took no prime-rl step: the persisted step map says which broadcast holds the weights", async () => {
    const config = await resolveConfig(join(REPO_ROOT, "configs", "quickstart.toml"), [
      `--run.output_dir="${out}"`,
      "--run.name=mapped",
    ]);
    const runDir = join(out, "mapped", "prime-rl");
    // Air steps 0..3 done; step 2 was empty, so step 3's batch was prime-rl step 3.
    mkdirSync(join(runDir, "broadcasts", "step_3"), { recursive: true });
    writeFileSync(join(runDir, "broadcasts", "step_3", "STABLE"), "");
    writeFileSync(join(runDir, "air-steps.json"), JSON.stringify({ 0: 1, 1: 2, 2: null, 3: 3 }));
    expect(resumeWeights(planOf(config).config.plugins.trainer, planOf(config).launch, 4)).toEqual({
      version: 4,
      path: join(runDir, "resume-weights", "step_3"),
      kind: "full",
    });
  });
});
