import type { ProcessContext } from "@air/core";

/** The launcher's `[trainer_process]` keys this plugin reads (validated by the launcher's schema, sections.ts). */
export interface TrainerProcessSection {
  kind: string;
  launch: "torchrun" | "entrypoint";
  /** "./…" entries already resolved against the TOML's dir. */
  command?: string[];
  module: string;
  nnodes: number;
  node_rank: number;
  master_addr: string;
  master_port: number;
  config_file?: string;
  lr: number;
  seq_len?: number;
  weight_decay?: number;
  max_norm?: number | null;
  trainer_config: Record<string, unknown>;
  extra_args: string[];
  env: Record<string, string>;
  max_restarts: number;
  ckpt_interval: number;
  ckpt_keep_last: number;
}

/** The launcher's `[inference]` keys this plugin reads. */
export interface InferenceSection {
  kind: string;
  host: string;
  port: number;
  router: boolean;
  backend_port?: number;
  model?: string;
  served_model_name?: string;
  max_model_len?: number;
  gpu_memory_utilization: number;
  tensor_parallel_size?: number;
  dtype?: string;
  lora: { enabled: boolean; max_rank: number; max_loras: number; modules: Record<string, string> };
  command?: string[];
  extra_args: string[];
  env: Record<string, string>;
}

/** The launcher's sections as this plugin reads them. */
export function launchSections(ctx: ProcessContext): {
  tp: TrainerProcessSection;
  inf: InferenceSection;
  model: { name: string; max_model_len?: number };
  run: { name: string; seed: number };
} {
  const s = ctx.sections;
  return {
    tp: s.trainer_process as unknown as TrainerProcessSection,
    inf: s.inference as unknown as InferenceSection,
    model: s.model as unknown as { name: string; max_model_len?: number },
    run: s.run as unknown as { name: string; seed: number },
  };
}
