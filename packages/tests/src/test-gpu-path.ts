import { join } from "node:path";
import { REPO_ROOT } from "@air/launcher/testing";

/** The CPU stand-ins and the sid torchrun (packages/tiny/README.md, "A GPU config on CPU"). */
export const STAND_INS = {
  inference: join(REPO_ROOT, "packages", "tiny", "bin", "inference"),
  /** The stand-in for stock `vllm serve` ([inference] kind = "vllm"). */
  vllm: join(REPO_ROOT, "packages", "tiny", "bin", "vllm"),
  torchrun: join(REPO_ROOT, "scripts", "torchrun-sid"),
  pythonPath: join(REPO_ROOT, "packages", "tiny", "py"),
  models: join(REPO_ROOT, "configs", "models"),
};

export interface CpuRun {
  /** Where the run's output goes (`[run] output_dir`). */
  out: string;
  /** Free ports for the inference server, torchrun's rendezvous and the ZMQ transport (port and port + 1). */
  port: number;
  masterPort: number;
  zmqPort: number;
  /** Trainer ranks = `[deployment] trainer_gpu_ids` of the config (one data-parallel rank per "GPU"). */
  ranks: number;
  /**
   * The config's env is mlgym: swap its tasks for the project's apartmentRent on the local runtime, with the
   * quickstart's episode length (2 turns: the tiny policy's task; 30-turn episodes of 64-128 rollouts take many
   * minutes per step on 2 CPU cores).
   */
  mlgym: boolean;
  /** `[inference] kind = "external"`: the server the test started (as the config tells users to): its router's URL
   * and its engine's (`[policy] admin_url`, one per base_url). */
  externalUrl?: string;
  externalAdminUrl?: string;
  /** A launched server with prime-rl's router on (`[inference] router = true`, the engine on `backendPort`). */
  router?: { backendPort: number };
  transport: "filesystem" | "zmq";
  /** The config's launched server: stock `vllm serve` (kept, its command swapped) or prime-rl's `inference`. */
  server: "vllm" | "prime-rl";
}

/**
 * The documented overrides that run a shipped GPU config on CPU through the GPU code path: the model (a tiny model
 * directory), the entrypoints (the inference command — `vllm` or prime-rl's `inference`, as the config has it —, torchrun command and module), the device, the tasks where CI
 * lacks MLGym, and the run's plumbing (output dir, ports, 2 steps). `data_world_size` is not given: the launcher
 * derives it from the trainer "GPUs", as prime-rl's `rl` does.
 * @example cpuOverrides({ out: "/tmp/o", port: 8000, masterPort: 29500, zmqPort: 5555, ranks: 5, mlgym: true, transport: "zmq", server: "vllm" })
 */
export function cpuOverrides(o: CpuRun): string[] {
  const model = join(STAND_INS.models, o.mlgym ? "quickstart" : "algebra-mc");
  const url = o.externalUrl ?? `http://127.0.0.1:${o.port}`;
  const server = o.externalUrl
    ? [
        `--inference.url="${o.externalUrl}"`,
        `--policy.base_url=["${o.externalUrl}/v1"]`,
        ...(o.externalAdminUrl ? [`--policy.admin_url=["${o.externalAdminUrl}/v1"]`] : []),
      ]
    : [
        `--inference.command=["${o.server === "vllm" ? STAND_INS.vllm : STAND_INS.inference}"]`,
        `--inference.port=${o.port}`,
        "--inference.startup_timeout_ms=120000",
        `--policy.base_url="${url}/v1"`,
        ...(o.router ? ["--inference.router=true", `--inference.backend_port=${o.router.backendPort}`] : []),
      ];
  const tasks = o.mlgym
    ? [
        `--env.mlgym_root="${join(STAND_INS.models, "..", "..")}"`,
        `--env.tasks=["apartmentRent"]`,
        `--env.runtime="local"`,
        "--env.max_steps=2",
        "--orchestrator.max_turns=2",
      ]
    : [];
  return [
    `--run.output_dir="${o.out}"`,
    "--run.max_steps=2",
    `--model.name="${model}"`,
    `--deployment.device="cpu"`,
    ...server,
    `--trainer_process.command=["${STAND_INS.torchrun}"]`,
    `--trainer_process.module="air_tiny.trainer"`,
    `--trainer_process.env={PYTHONPATH="${STAND_INS.pythonPath}"}`,
    `--trainer_process.master_port=${o.masterPort}`,
    "--trainer_process.startup_timeout_ms=300000",
    `--trainer.transport="${o.transport}"`,
    `--trainer.zmq_port=${o.zmqPort}`,
    ...tasks,
  ];
}
