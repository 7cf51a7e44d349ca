import { describe, expect, test } from "bun:test";
import TOML from "@iarna/toml";
import type { PrimeRlVersion } from "./codecs/index.ts";
import { orchestratorControlToml, type PrimeRlTrainerSettings, primeRlTrainerConfig } from "./config.ts";
import { type PrimeRlConfigClass, primeRlFields, unknownPrimeRlKeys } from "./fields.ts";

function fields(version: PrimeRlVersion, cls: PrimeRlConfigClass) {
  return { version, cls };
}
function unknownKeys(text: string, f: { version: PrimeRlVersion; cls: PrimeRlConfigClass }): string[] {
  return unknownPrimeRlKeys(text, f.version, f.cls);
}

const full: PrimeRlTrainerSettings = {
  model: "Qwen/Qwen3-0.6B",
  outputDir: "/out",
  lr: 1e-6,
  seqLen: 4096,
  maxSteps: 10,
  weightDecay: 0.01,
  maxNorm: 1,
  loss: { type: "default", dppo_mask_low: 0.2, dppo_mask_high: 0.2, adv_tau: 1, kl_tau: 0.001 },
  lora: { rank: 8, alpha: 16 },
  ckptInterval: 1,
  resumeStep: 3,
};

describe("trainer TOML keys exist in prime-rl's TrainerConfig at the pinned commit", () => {
  for (const version of ["0.8", "0.9"] as const) {
    test(version, () => {
      const known = fields(version, "TrainerConfig");
      expect(primeRlFields(version, "TrainerConfig").size).toBeGreaterThan(100);
      for (const extra of [
        {},
        { fileMonitor: false },
        version === "0.9" ? { transport: { type: "zmq" as const, host: "h", port: 5555 } } : {},
      ]) {
        expect(unknownKeys(primeRlTrainerConfig({ ...full, ...extra, version }), known)).toEqual([]);
      }
    });
  }

  test("the check fails on a key of the other version", () => {
    expect(
      unknownKeys(primeRlTrainerConfig({ ...full, version: "0.8" }), fields("0.9", "TrainerConfig")),
    ).toEqual(expect.arrayContaining(["max_concurrent_runs", "ckpt.resume_step", "file_monitor"]));
    expect(
      unknownKeys(primeRlTrainerConfig({ ...full, version: "0.9" }), fields("0.8", "TrainerConfig")),
    ).toEqual(expect.arrayContaining(["resume", "monitors"]));
  });

  test("resume and checkpoints: 0.8 [ckpt] resume_step, 0.9 [resume] step", () => {
    const v08 = TOML.parse(primeRlTrainerConfig({ ...full, version: "0.8" }));
    expect(v08.ckpt).toEqual({ interval: 1, resume_step: 3 });
    const v09 = TOML.parse(primeRlTrainerConfig({ ...full, version: "0.9" }));
    expect(v09.ckpt).toEqual({ interval: 1 });
    expect(v09.resume).toEqual({ step: 3 });
  });
});

test("0.8 control/orch.toml keys exist in OrchestratorConfig, resume_step included", () => {
  const text = orchestratorControlToml({
    model: "m",
    runDir: "/out/run_default",
    maxSteps: 3,
    maxOffPolicySteps: 1,
    temperature: 0.8,
    lora: { rank: 8, alpha: 16 },
    resumeStep: 4,
  });
  // `renderer` is a RendererConfig of the separate `renderers` package; its `name` is not in prime-rl's sources.
  expect(unknownKeys(text, fields("0.8", "OrchestratorConfig"))).toEqual(["renderer.name"]);
  expect(TOML.parse(text).renderer).toEqual({ name: "default" });
  expect(TOML.parse(text).ckpt).toEqual({ resume_step: 4 });
});

test("a misspelt key and free-form tables", () => {
  expect(unknownPrimeRlKeys('[optim]\nlrr = 1\n[env_vars]\nFOO = "1"\n', "0.9", "TrainerConfig")).toEqual([
    "optim.lrr",
  ]);
});
