import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadConfig, parseOverrides } from "@air/core";
import TOML from "@iarna/toml";
import { builtinRegistry } from "./builtins.ts";
import { inferenceChild, trainerChild } from "./commands.ts";
import { planOf } from "./run-plan.ts";
import { LAUNCHER_SECTIONS, type RunConfig } from "./sections.ts";
import { removeTempDirs, writeFixtureConfig } from "./test-helpers.ts";
import { inferenceBaseUrl } from "./urls.ts";

afterAll(removeTempDirs);

async function load(overrides: string[] = [], withTrainer = true): Promise<RunConfig> {
  const fx = await writeFixtureConfig({ withTrainer });
  return loadConfig(fx.file, {
    registry: builtinRegistry(),
    overrides: parseOverrides(overrides),
    extraSections: LAUNCHER_SECTIONS,
  });
}

const gpus = { inference: [0, 1], trainer: [2, 3, 4], env: [7] };

describe("vllm serve command", () => {
  test("model, host, port, max-model-len, tensor parallel over the inference GPUs, LoRA flags, extra args", async () => {
    const config = await load([
      "--inference.port=8123",
      "--inference.lora.enabled=true",
      "--inference.lora.max_rank=32",
      '--inference.lora.modules={ step0 = "/abs/adapters/step0" }',
      '--inference.extra_args=["--enforce-eager"]',
    ]);
    expect((await inferenceChild(planOf(config), gpus))?.argv).toEqual([
      "vllm",
      "serve",
      "fake/model",
      "--host",
      "127.0.0.1",
      "--port",
      "8123",
      "--gpu-memory-utilization",
      "0.9",
      "--tensor-parallel-size",
      "2",
      "--seed",
      "0",
      "--max-model-len",
      "4096",
      "--enable-lora",
      "--max-lora-rank",
      "32",
      "--max-loras",
      "1",
      "--lora-modules",
      "step0=/abs/adapters/step0",
      "--logprobs-mode",
      "processed_logprobs",
      "--enforce-eager",
    ]);
    const child = await inferenceChild(planOf(config), gpus);
    expect(child?.env).toMatchObject({
      CUDA_VISIBLE_DEVICES: "0,1",
      VLLM_ALLOW_RUNTIME_LORA_UPDATING: "True",
    });
    expect(child?.healthUrls).toEqual(["http://127.0.0.1:8123/health", "http://127.0.0.1:8123/v1/models"]);
  });

  test("external runs nothing and keeps its URL", async () => {
    const config = await load([
      "--inference.kind",
      "external",
      "--inference.url",
      "http://10.0.0.5:8000/v1/",
    ]);
    expect(await inferenceChild(planOf(config), gpus)).toBeUndefined();
    expect(inferenceBaseUrl(config)).toBe("http://10.0.0.5:8000");
  });
});

describe("prime-rl commands", () => {
  test("inference behind prime-rl's router: the file written, both the router and the engine health-checked", async () => {
    const config = await load(["--inference.kind", "prime-rl", "--inference.router", "true"]);
    const port = config.root.inference.port;
    const child = await inferenceChild(planOf(config), gpus);
    const doc = TOML.parse(readFileSync(child?.argv[2] as string, "utf8"));
    expect(doc).toMatchObject({ router: { type: "vllm-router" }, backend_port: port + 100 });
    expect(child?.healthUrls).toEqual([
      `http://127.0.0.1:${port}/health`,
      `http://127.0.0.1:${port}/v1/models`,
      `http://127.0.0.1:${port + 100}/health`,
      `http://127.0.0.1:${port + 100}/v1/models`,
    ]);
  });

  test("inference: `inference @ <generated toml>` with model, server, tp, LoRA", async () => {
    const config = await load(["--inference.kind", "prime-rl", "--inference.lora.enabled", "true"]);
    const child = await inferenceChild(planOf(config), gpus);
    expect(child?.argv.slice(0, 2)).toEqual(["inference", "@"]);
    const toml = TOML.parse(readFileSync(child?.argv[2] as string, "utf8"));
    // prime-rl 0.9 (the default prime_rl_version) keeps the vLLM options under [vllm]; no router in front.
    expect(toml).toMatchObject({
      router: "None",
      vllm: {
        model: "fake/model",
        max_model_len: 4096,
        tensor_parallel_size: 2,
        enable_lora: true,
        max_lora_rank: 32,
      },
      server: { host: "127.0.0.1", port: config.root.inference.port },
      weight_broadcast: { type: "filesystem" },
    });
  });

  test("trainer: torchrun with nodes, ranks and rendezvous for multi-node", async () => {
    const config = await load([
      "--trainer_process.nnodes=2",
      "--trainer_process.node_rank=1",
      '--trainer_process.master_addr="10.0.0.1"',
      "--trainer_process.master_port=29501",
    ]);
    const child = await trainerChild(planOf(config), gpus);
    const argv = child?.argv ?? [];
    expect(argv[0]).toBe("torchrun");
    expect(argv).toContain("--nnodes=2");
    expect(argv).toContain("--node-rank=1");
    expect(argv).toContain("--rdzv-endpoint=10.0.0.1:29501");
    expect(argv).toContain("--nproc-per-node=3");
    expect(argv.slice(-4)).toEqual(["-m", "prime_rl.trainer.rl.train", "@", argv.at(-1) as string]);
    expect(argv.at(-1)).toEndWith("fixtures/trainer.toml");
    expect(child?.env?.CUDA_VISIBLE_DEVICES).toBe("2,3,4");
  });

  test("trainer: the CPU stand-in is the same torchrun argv with another module and command; device cpu drops CUDA_VISIBLE_DEVICES", async () => {
    const config = await load([
      '--trainer_process.command=["../scripts/torchrun-sid"]',
      '--trainer_process.module="air_tiny.trainer"',
      '--trainer_process.env={ PYTHONPATH = "../packages/tiny/py" }',
      '--deployment.device="cpu"',
    ]);
    const stock = await trainerChild(planOf(await load([])), gpus);
    const child = await trainerChild(planOf(config), gpus);
    const argv = child?.argv ?? [];
    expect(argv[0]).toBe(resolve(config.dir, "../scripts/torchrun-sid"));
    // Same argv as prime-rl's (each fixture has its own run name and ports, so those three differ).
    const perRun = /^--(rdzv-endpoint|rdzv-id|log-dir)=/;
    const same = (a: string[]) =>
      a
        .slice(1)
        .map((x) =>
          perRun.test(x) ? x.split("=")[0] : x === "prime_rl.trainer.rl.train" ? "air_tiny.trainer" : x,
        );
    expect(same(argv)).toEqual(same(stock?.argv ?? []));
    expect(argv).toContain("--nproc-per-node=3");
    expect(child?.env?.CUDA_VISIBLE_DEVICES).toBeUndefined();
    expect(child?.env?.PYTHONPATH).toBe(resolve(config.dir, "../packages/tiny/py"));
  });

  test("trainer: prime-rl's entrypoint behind a custom command; node_rank must be below nnodes", async () => {
    const config = await load([
      "--trainer_process.launch=entrypoint",
      '--trainer_process.command=["uv", "run", "trainer"]',
    ]);
    const child = await trainerChild(planOf(config), gpus);
    expect(child?.argv).toEqual(["uv", "run", "trainer", "@", expect.stringMatching(/trainer\.toml$/)]);
    await expect(load(["--trainer_process.node_rank=2"])).rejects.toThrow("trainer_process.node_rank");
  });

  test("trainer: the generated TOML shares output_dir with the transport plugin and takes LoRA, lr, seq_len", async () => {
    const fx = await writeFixtureConfig();
    const text = readFileSync(fx.file, "utf8").replace(/config_file = .*\n/, "");
    writeFileSync(
      fx.file,
      `${text}\n[trainer]\nplugin = "prime-rl"\nlora = true\nlora_rank = 32\nlora_alpha = 64\n`,
    );
    const config = await loadConfig(fx.file, {
      registry: builtinRegistry(),
      overrides: parseOverrides(["--trainer_process.trainer_config", "{ ckpt = { interval = 5 } }"]),
      extraSections: LAUNCHER_SECTIONS,
    });
    const child = await trainerChild(planOf(config), gpus);
    const toml = TOML.parse(readFileSync(child?.argv.at(-1) as string, "utf8"));
    expect(toml).toMatchObject({
      output_dir: join(config.runDir, "prime-rl"),
      model: { name: "fake/model", seq_len: 4096, lora: { rank: 32, alpha: 64 } },
      optim: { lr: 1e-5 },
      rollout_transport: { type: "filesystem" },
      ckpt: { interval: 5 },
    });
  });

  test("trainer kind none starts nothing", async () => {
    expect(await trainerChild(planOf(await load([], false)), gpus)).toBeUndefined();
  });
});
