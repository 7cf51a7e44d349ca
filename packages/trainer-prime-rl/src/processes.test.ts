import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProcessStart } from "@air/core";
import TOML from "@iarna/toml";
import type { PrimeRlVersion } from "./codecs/index.ts";
import { unknownPrimeRlKeys } from "./fields.ts";
import {
  type PrimeRlServerSection,
  type PrimeRlTrainerSection,
  primeRlServerSection,
  primeRlTrainerSection,
} from "./launch-sections.ts";
import { PRIME_RL_PROCESSES } from "./processes.ts";
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
const { trainer_process: TRAINERS, inference: SERVERS } = PRIME_RL_PROCESSES;
const RUN_DIR = "/abs/out/run";

/**
 * What the launcher hands a process kind (its `[trainer_process]` and `[inference]` keys at their defaults,
 * launcher/src/sections.ts; the kind's own keys through the kind's schema), with `version` as the trainer plugin's
 * `prime_rl_version`; `gpus` as the launcher's trainer / inference GPUs.
 */
function base(
  version: PrimeRlVersion,
  o: {
    tp?: Record<string, unknown>;
    inf?: Record<string, unknown>;
    settings?: Record<string, unknown>;
    gpus?: number[];
    resumeStep?: number;
  },
) {
  const gpus = o.gpus ?? [2, 3];
  const launcher = (keys: Record<string, unknown>, own: Set<string>) =>
    Object.fromEntries(Object.entries(keys).filter(([k]) => own.has(k) === false));
  const tpKeys = new Set(Object.keys(primeRlTrainerSection.shape));
  const infKeys = new Set(Object.keys(primeRlServerSection.shape));
  return {
    configDir: "/abs/cfg",
    runDir: RUN_DIR,
    configFile: "/abs/cfg/run.toml",
    trainerProcess: {
      kind: "prime-rl",
      nnodes: 1,
      node_rank: 0,
      master_addr: "127.0.0.1",
      master_port: 29500,
      extra_args: [],
      env: { FAKE_TRAINER_MODE: "ok" },
      max_restarts: 0,
      ...launcher(o.tp ?? {}, tpKeys),
    },
    inference: {
      kind: "vllm",
      host: "127.0.0.1",
      port: 8000,
      extra_args: [],
      env: {},
      ...launcher(o.inf ?? {}, infKeys),
    },
    model: { name: "fake/model", max_model_len: 4096 },
    run: { name: "r1", seed: 0 },
    gpus: { count: gpus.length, key: "deployment.trainer_gpu_ids" },
    trainerSettings: { prime_rl_version: version, ...o.settings },
    trains: true,
    gpuIds: gpus,
    gpuCount: gpus.length,
    resumeStep: o.resumeStep,
  };
}

/** Only the keys of `keys` that `schema` declares (the launcher hands a kind its own keys only). */
function ownOf(keys: Record<string, unknown> | undefined, shape: Record<string, unknown>) {
  return Object.fromEntries(Object.entries(keys ?? {}).filter(([k]) => k in shape));
}

/** A trainer kind's start context. */
function ctx(
  version: PrimeRlVersion,
  o: Parameters<typeof base>[1] = {},
): ProcessStart<PrimeRlTrainerSection> {
  const ckpt = { ckpt_interval: 1, ...o.tp };
  return {
    ...base(version, o),
    section: primeRlTrainerSection.parse(ownOf(ckpt, primeRlTrainerSection.shape)),
  };
}

/** An inference kind's start context. */
function serverCtx(
  version: PrimeRlVersion,
  o: Parameters<typeof base>[1] = {},
): ProcessStart<PrimeRlServerSection> {
  const inf = { lora: { max_rank: 16 }, ...o.inf };
  return {
    ...base(version, o),
    section: primeRlServerSection.parse(ownOf(inf, primeRlServerSection.shape)),
    gpus: { count: (o.gpus ?? [2, 3]).length, key: "deployment.inference_gpu_ids" },
  };
}

const trainer = (c: ProcessStart<PrimeRlTrainerSection>) => TRAINERS["prime-rl"].spec(c);
const server = (kind: "prime-rl" | "vllm", c: ProcessStart<PrimeRlServerSection>) => SERVERS[kind].spec(c);

for (const version of ["0.8", "0.9"] as const) {
  describe(`prime-rl ${version}: children as prime-rl's rl starts them`, () => {
    test("trainer: torchrun argv and environment, the generated TOML written under configs/", () => {
      const spec = trainer(ctx(version, { tp: { env: { FAKE_TRAINER_MODE: "ok", WANDB_MODE: "offline" } } }));
      const file = join(RUN_DIR, "configs", "trainer.toml");
      expect(spec.argv).toEqual([
        "torchrun",
        "--role=trainer",
        "--rdzv-endpoint=127.0.0.1:29500",
        "--rdzv-id=r1",
        `--log-dir=${join(RUN_DIR, "logs", "torchrun")}`,
        "--local-ranks-filter=0",
        "--redirect=3",
        "--tee=3",
        "--nproc-per-node=2",
        "-m",
        "prime_rl.trainer.rl.train",
        "@",
        file,
      ]);
      // The user's env after prime-rl's defaults, GPUs last.
      expect(spec.env).toEqual({
        ...COMMON,
        ...TRAINER,
        FAKE_TRAINER_MODE: "ok",
        WANDB_MODE: "offline",
        CUDA_VISIBLE_DEVICES: "2,3",
      });
      expect(spec.files.map((f) => f.path)).toEqual([file]);
      expect(unknownPrimeRlKeys(spec.files[0]?.text ?? "", version, "TrainerConfig")).toEqual([]);
    });

    test("trainer: a user's config_file is used as is (nothing written); no GPU ids on CPU", () => {
      const spec = trainer(ctx(version, { tp: { config_file: "own/trainer.toml" }, gpus: [] }));
      expect(spec.files).toEqual([]);
      expect(spec.argv.at(-1)).toBe("/abs/cfg/own/trainer.toml");
      expect(spec.argv).toContain("--nproc-per-node=1");
      expect(spec.env.CUDA_VISIBLE_DEVICES).toBeUndefined();
    });

    test("trainer: multi-node adds --nnodes/--node-rank; the entrypoint gets a single-rank environment", () => {
      const multi = trainer(ctx(version, { tp: { nnodes: 2, node_rank: 1 } }));
      expect(multi.argv.slice(1, 4)).toEqual(["--role=trainer", "--nnodes=2", "--node-rank=1"]);
      const single = trainer(ctx(version, { tp: { launch: "entrypoint", master_port: 29555 } }));
      expect(single.argv.slice(0, 2)).toEqual(["trainer", "@"]);
      expect(single.env).toMatchObject({
        ...COMMON,
        RANK: "0",
        LOCAL_RANK: "0",
        WORLD_SIZE: "1",
        LOCAL_WORLD_SIZE: "1",
        MASTER_ADDR: "127.0.0.1",
        MASTER_PORT: "29555",
      });
    });

    test("inference (prime-rl): environment, router written off, every key in its InferenceConfig", () => {
      const lora = { enabled: true, max_rank: 16, max_loras: 1, modules: {} };
      const c = serverCtx(version, { inf: { kind: "prime-rl", lora }, gpus: [0] });
      const spec = server("prime-rl", c);
      expect(spec.env).toMatchObject({ ...COMMON, ...INFERENCE, CUDA_VISIBLE_DEVICES: "0" });
      const file = join(RUN_DIR, "configs", "inference.toml");
      expect(spec.argv).toEqual(["inference", "@", file]);
      const text = spec.files.find((f) => f.path === file)?.text ?? "";
      expect(text).toContain('router = "None"');
      expect(unknownPrimeRlKeys(text, version, "InferenceConfig")).toEqual([]);
      expect(SERVERS["prime-rl"].enginePort?.(c)).toBeUndefined();
    });

    test("inference (prime-rl) with its router: router on port, engine on backend_port", () => {
      const c = serverCtx(version, { inf: { kind: "prime-rl", router: true, port: 8123 } });
      const doc = TOML.parse(server("prime-rl", c).files[0]?.text ?? "") as Record<string, unknown>;
      expect(doc.router).toEqual({ type: "vllm-router" });
      expect(doc.backend_port).toBe(8223);
      expect(doc.server).toEqual({ host: "127.0.0.1", port: 8123 });
      expect(unknownPrimeRlKeys(TOML.stringify(doc as TOML.JsonMap), version, "InferenceConfig")).toEqual([]);
      expect(SERVERS["prime-rl"].enginePort?.(c)).toBe(8223);
      const own = serverCtx(version, { inf: { kind: "prime-rl", router: true, backend_port: 9001 } });
      expect(SERVERS["prime-rl"].enginePort?.(own)).toBe(9001);
    });
  });
}

describe("stock vLLM serve", () => {
  test("--logprobs-mode processed_logprobs (what prime-rl's trainer assumes) and prime-rl's server environment", () => {
    const spec = server("vllm", serverCtx("0.9", { inf: { extra_args: ["--enforce-eager"] }, gpus: [0] }));
    const argv = spec.argv;
    expect(argv.slice(argv.indexOf("--logprobs-mode"), argv.indexOf("--logprobs-mode") + 2)).toEqual([
      "--logprobs-mode",
      "processed_logprobs",
    ]);
    expect(spec.env).toMatchObject({ ...COMMON, ...INFERENCE, CUDA_VISIBLE_DEVICES: "0" });
    expect(spec.files).toEqual([]);
    const own = server("vllm", serverCtx("0.9", { inf: { extra_args: ["--logprobs-mode=raw_logprobs"] } }));
    expect(own.argv.filter((a) => a.startsWith("--logprobs-mode"))).toEqual(["--logprobs-mode=raw_logprobs"]);
    expect(SERVERS.vllm.enginePort).toBeUndefined();
  });
});

describe("trainer TOML", () => {
  test("0.9: ZMQ transport from the plugin, resume step, and a misspelt trainer_config key refused", () => {
    const zmq = ctx("0.9", { settings: { transport: "zmq", zmq_port: 6000 } });
    const text = primeRlTrainerToml(zmq, { resumeStep: 7 });
    expect(text).toContain("[rollout_transport]");
    expect(text).toMatch(/type = "zmq"[\s\S]*port = 6_?000/);
    expect(text).toMatch(/\[resume\]\s*step = 7/);
    expect(trainer({ ...zmq, resumeStep: 7 }).files[0]?.text).toBe(text);
    const bad = ctx("0.9", { tp: { trainer_config: { optim: { lrr: 1 } } } });
    expect(() => primeRlTrainerToml(bad)).toThrow("prime-rl 0.9's TrainerConfig has no optim.lrr");
  });

  test("--resume with a user's own config_file: a copy with the resume step, as each version names it", () => {
    const dir = mkdtempSync(join(tmpdir(), "air-own-trainer-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const own = join(dir, "own.toml");
    writeFileSync(own, '# mine\noutput_dir = "/out/p"\n[model]\nname = "m"\n[ckpt]\ninterval = 2\n');
    const fresh = trainer(ctx("0.9", { tp: { config_file: own } }));
    expect(fresh.argv.at(-1)).toBe(own);
    expect(fresh.files).toEqual([]);
    const generated = join(RUN_DIR, "configs", "trainer.toml");
    for (const [version, key] of [
      ["0.9", { resume: { step: 3 } }],
      ["0.8", { ckpt: { interval: 2, resume_step: 3 } }],
    ] as const) {
      const spec = trainer(ctx(version, { tp: { config_file: own }, resumeStep: 3 }));
      expect(spec.argv.at(-1)).toBe(generated);
      expect(spec.files.map((f) => f.path)).toEqual([generated]);
      const text = spec.files[0]?.text ?? "";
      expect(text.startsWith(`# ${own}, `)).toBe(true);
      expect(TOML.parse(text)).toEqual({
        output_dir: "/out/p",
        model: { name: "m" },
        ckpt: { interval: 2 },
        ...key,
      });
    }
  });

  test("one seq_len: a trainer [model] seq_len that contradicts the packing bin size names both keys", () => {
    const kind = TRAINERS["prime-rl"];
    const own = { tp: { trainer_config: { model: { seq_len: 2048 } } } };
    expect(kind.problems?.(ctx("0.9", own))).toEqual([
      "trainer_process.trainer_config.model.seq_len = 2048 contradicts model.max_model_len = 4096 (the packing bin size: one seq_len, as prime-rl's rl shares it); remove trainer_process.trainer_config.model.seq_len or set model.max_model_len",
    ]);
    expect(kind.problems?.(ctx("0.9", { ...own, settings: { seq_len: 2048 } }))).toEqual([]);
    const text = primeRlTrainerToml(ctx("0.9", { settings: { seq_len: 2048 } }));
    expect(TOML.parse(text).model).toMatchObject({ seq_len: 2048 });
  });

  test("max_restarts without checkpoints is a problem naming the key that sets none", () => {
    const kind = TRAINERS["prime-rl"];
    expect(kind.problems?.(ctx("0.9", { tp: { max_restarts: 1 } }))).toEqual([]);
    expect(kind.problems?.(ctx("0.9", { tp: { max_restarts: 1, ckpt_interval: 0 } }))).toEqual([
      "trainer_process.max_restarts = 1 needs trainer checkpoints, but trainer_process.ckpt_interval sets none; set trainer_process.ckpt_interval (e.g. 1) or max_restarts = 0",
    ]);
    expect(kind.problems?.(ctx("0.9", { tp: { ckpt_interval: 0 } }))).toEqual([]);
    const cp = ctx("0.9", { tp: { trainer_config: { model: { cp: 2 } } } });
    expect(kind.contextParallel?.(cp)).toEqual({ cp: 2, key: "trainer_process.trainer_config.model.cp" });
  });
});
