import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig, parseOverrides } from "@air/core";
import { type PrimeRlVersion, unknownPrimeRlKeys } from "@air/trainer-prime-rl";
import TOML from "@iarna/toml";
import { builtinRegistry } from "./builtins.ts";
import { inferenceChild, trainerChild } from "./commands.ts";
import { LAUNCHER_SECTIONS, type RunConfig } from "./sections.ts";
import { removeTempDirs, writeFixtureConfig } from "./test-helpers.ts";
import { primeRlTrainerToml } from "./trainer-toml.ts";

// What prime-rl's `rl` sets for its children at both pins (entrypoints/rl.py, utils/process.py), copied here by
// hand from the source so a change in prime-rl-argv.ts cannot pass unnoticed.
const COMMON = {
  CUDA_DEVICE_ORDER: "PCI_BUS_ID",
  PYTHONUNBUFFERED: "1",
  OMP_NUM_THREADS: "1",
  GIT_LFS_SKIP_SMUDGE: "1",
};
const TRAINER = { PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:True" };
const INFERENCE = {
  VLLM_WORKER_MULTIPROC_METHOD: "spawn",
  PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:False",
  VLLM_ENGINE_READY_TIMEOUT_S: "4200",
  UCX_TLS: "all",
};
const gpus = { inference: [0], trainer: [2, 3], env: [] };

afterAll(removeTempDirs);

async function load(
  version: PrimeRlVersion,
  overrides: string[] = [],
  keepTrainerFile = false,
): Promise<RunConfig> {
  const fx = await writeFixtureConfig({
    extra: `[trainer]\nplugin = "prime-rl"\nprime_rl_version = "${version}"\n`,
  });
  const text = readFileSync(fx.file, "utf8");
  if (!keepTrainerFile) await Bun.write(fx.file, text.replace(/config_file = .*\n/, ""));
  return loadConfig(fx.file, {
    registry: builtinRegistry(),
    overrides: parseOverrides(overrides),
    extraSections: LAUNCHER_SECTIONS,
  });
}

for (const version of ["0.8", "0.9"] as const) {
  describe(`prime-rl ${version}: children as prime-rl's rl starts them`, () => {
    test("trainer: torchrun argv and environment", async () => {
      const config = await load(version, ['--trainer_process.env={ WANDB_MODE = "offline" }']);
      const child = await trainerChild(config, gpus);
      const file = child?.argv.at(-1) as string;
      expect(child?.argv).toEqual([
        "torchrun",
        "--role=trainer",
        `--rdzv-endpoint=127.0.0.1:${config.root.trainer_process.master_port}`,
        `--rdzv-id=${config.root.run.name}`,
        `--log-dir=${join(config.runDir, "logs", "torchrun")}`,
        "--local-ranks-filter=0",
        "--redirect=3",
        "--tee=3",
        "--nproc-per-node=2",
        "-m",
        "prime_rl.trainer.rl.train",
        "@",
        file,
      ]);
      // The user's env (the fixture's and this override) after prime-rl's defaults, GPUs last.
      expect(child?.env).toEqual({
        ...COMMON,
        ...TRAINER,
        FAKE_CRASH_AFTER_MS: "1500",
        FAKE_TRAINER_MODE: "ok",
        WANDB_MODE: "offline",
        CUDA_VISIBLE_DEVICES: "2,3",
      });
      expect(unknownPrimeRlKeys(readFileSync(file, "utf8"), version, "TrainerConfig")).toEqual([]);
    });

    test("trainer: multi-node adds --nnodes/--node-rank; the entrypoint gets a single-rank environment", async () => {
      const multi = await trainerChild(
        await load(version, ["--trainer_process.nnodes=2", "--trainer_process.node_rank=1"]),
        gpus,
      );
      expect(multi?.argv.slice(1, 4)).toEqual(["--role=trainer", "--nnodes=2", "--node-rank=1"]);
      const config = await load(version, ["--trainer_process.launch=entrypoint"]);
      const single = await trainerChild(config, gpus);
      expect(single?.argv.slice(0, 2)).toEqual(["trainer", "@"]);
      expect(single?.env).toMatchObject({
        ...COMMON,
        RANK: "0",
        LOCAL_RANK: "0",
        WORLD_SIZE: "1",
        LOCAL_WORLD_SIZE: "1",
        MASTER_ADDR: "127.0.0.1",
        MASTER_PORT: String(config.root.trainer_process.master_port),
      });
    });

    test("inference (prime-rl): environment, router written off, every key in its InferenceConfig", async () => {
      const config = await load(version, ["--inference.kind=prime-rl", "--inference.lora.enabled=true"]);
      const child = await inferenceChild(config, gpus);
      expect(child?.env).toMatchObject({ ...COMMON, ...INFERENCE, CUDA_VISIBLE_DEVICES: "0" });
      const text = readFileSync(child?.argv[2] as string, "utf8");
      expect(text).toContain('router = "None"');
      expect(unknownPrimeRlKeys(text, version, "InferenceConfig")).toEqual([]);
    });

    test("inference (prime-rl) with its router: router on port, engine on backend_port, both health-checked", async () => {
      const config = await load(version, ["--inference.kind=prime-rl", "--inference.router=true"]);
      const port = config.root.inference.port;
      const child = await inferenceChild(config, gpus);
      const doc = TOML.parse(readFileSync(child?.argv[2] as string, "utf8")) as Record<string, unknown>;
      expect(doc.router).toEqual({ type: "vllm-router" });
      expect(doc.backend_port).toBe(port + 100);
      expect(doc.server).toEqual({ host: "127.0.0.1", port });
      expect(unknownPrimeRlKeys(TOML.stringify(doc as TOML.JsonMap), version, "InferenceConfig")).toEqual([]);
      expect(child?.healthUrls).toEqual([
        `http://127.0.0.1:${port}/health`,
        `http://127.0.0.1:${port}/v1/models`,
        `http://127.0.0.1:${port + 100}/health`,
        `http://127.0.0.1:${port + 100}/v1/models`,
      ]);
    });
  });
}

describe("stock vLLM serve", () => {
  test("--logprobs-mode processed_logprobs (what prime-rl's trainer assumes) and prime-rl's server environment", async () => {
    const config = await load("0.9", ['--inference.extra_args=["--enforce-eager"]']);
    const child = await inferenceChild(config, gpus);
    const argv = child?.argv ?? [];
    expect(argv.slice(argv.indexOf("--logprobs-mode"), argv.indexOf("--logprobs-mode") + 2)).toEqual([
      "--logprobs-mode",
      "processed_logprobs",
    ]);
    expect(child?.env).toMatchObject({ ...COMMON, ...INFERENCE, CUDA_VISIBLE_DEVICES: "0" });
    const own = await inferenceChild(
      await load("0.9", ['--inference.extra_args=["--logprobs-mode=raw_logprobs"]']),
      gpus,
    );
    expect(own?.argv.filter((a) => a.startsWith("--logprobs-mode"))).toEqual([
      "--logprobs-mode=raw_logprobs",
    ]);
  });
});

describe("trainer TOML", () => {
  test("0.9: ZMQ transport from the plugin, resume step, and a misspelt trainer_config key refused", async () => {
    const config = await load("0.9", [], false);
    const zmq = await loadConfig(config.file, {
      registry: builtinRegistry(),
      overrides: parseOverrides(["--trainer.transport=zmq", "--trainer.zmq_port=6000"]),
      extraSections: LAUNCHER_SECTIONS,
    });
    const text = await primeRlTrainerToml(zmq, { resumeStep: 7 });
    expect(text).toContain("[rollout_transport]");
    expect(text).toMatch(/type = "zmq"[\s\S]*port = 6_?000/);
    expect(text).toMatch(/\[resume\]\s*step = 7/);
    const bad = await loadConfig(config.file, {
      registry: builtinRegistry(),
      overrides: parseOverrides(["--trainer_process.trainer_config={ optim = { lrr = 1 } }"]),
      extraSections: LAUNCHER_SECTIONS,
    });
    await expect(primeRlTrainerToml(bad)).rejects.toThrow("prime-rl 0.9's TrainerConfig has no optim.lrr");
  });
});
