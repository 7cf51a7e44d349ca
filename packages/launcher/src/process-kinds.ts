import type { ProcessContext, ProcessKind } from "@air/core";
import { knownKinds, type ProcessRole } from "./kind-table.ts";
import { localCommand, localEnv } from "./local-paths.ts";
import { LAUNCHER_KEYS, type RunConfig } from "./sections.ts";

/** A process the launcher starts: its kind and the context the kind reads. */
export interface PlannedProcess {
  readonly kind: ProcessKind;
  readonly ctx: ProcessContext;
}

/** The process kind a plugin declares for `[role] kind = kind`; throws naming the key when none does. */
function processKind(role: ProcessRole, kind: string): ProcessKind {
  const found = knownKinds(role)[kind];
  if (!found) throw new Error(`${role}.kind: no plugin starts a process of kind "${kind}"`);
  return found;
}

/** The trainer process `[trainer_process] kind` names; undefined for `kind = "none"`. */
export function trainerKind(config: RunConfig): ProcessKind | undefined {
  const { kind } = config.root.trainer_process;
  return kind === "none" ? undefined : processKind("trainer_process", kind);
}

/** The inference server `[inference] kind` names; undefined for `kind = "external"` (a URL already up). */
export function inferenceKind(config: RunConfig): ProcessKind | undefined {
  const { kind } = config.root.inference;
  return kind === "external" ? undefined : processKind("inference", kind);
}

/**
 * The process the `role`'s section names, with the context its kind reads (`processContext`); undefined for
 * `[trainer_process] kind = "none"` and `[inference] kind = "external"`.
 * @example plannedProcess(config, "inference", "lora")?.ctx.weightUpdate // "lora"
 */
export function plannedProcess(
  config: RunConfig,
  role: ProcessRole,
  weightUpdate?: "full" | "lora",
): { kind: ProcessKind; ctx: ProcessContext } | undefined {
  const kind = role === "inference" ? inferenceKind(config) : trainerKind(config);
  return kind && { kind, ctx: processContext(config, role, weightUpdate) };
}

/** The GPUs `[deployment]` gives a role, counted, and the key that gives them. */
function roleGpus(config: RunConfig, role: ProcessRole): { count: number; key: string } {
  const d = config.root.deployment;
  const [ids, count, idsKey, countKey] =
    role === "inference"
      ? [d.inference_gpu_ids, d.num_infer_gpus, "inference_gpu_ids", "num_infer_gpus"]
      : [d.trainer_gpu_ids, d.num_train_gpus, "trainer_gpu_ids", "num_train_gpus"];
  return ids.length > 0
    ? { count: ids.length, key: `deployment.${idsKey}` }
    : { count: count ?? 0, key: `deployment.${countKey}` };
}

/** The kind's own keys of the section, parsed by its schema (the launcher's schema checked them already). */
function ownKeys(kind: ProcessKind | undefined, role: ProcessRole, section: Record<string, unknown>) {
  const own = Object.fromEntries(Object.entries(section).filter(([k]) => !LAUNCHER_KEYS[role].has(k)));
  return kind ? kind.section.parse(own) : own;
}

/**
 * What the `role`'s process kind reads (`trainer_process` unless named): the launcher's keys of both sections
 * (`command` and `env` with "./…" paths resolved against the TOML's dir), the kind's own keys as its schema
 * outputs them, `[model]`, `[run]`, the role's GPUs, and the run's trainer plugin's `launch.processSettings`.
 * `weightUpdate`: how the run's policy loads weights (its plugins' needs).
 */
export function processContext(
  config: RunConfig,
  role: ProcessRole = "trainer_process",
  weightUpdate?: "full" | "lora",
): ProcessContext {
  const { trainer_process: tp, inference: inf, model, run } = config.root;
  const { definition, config: trainerConfig } = config.plugins.trainer;
  const kind = role === "inference" ? inferenceKind(config) : trainerKind(config);
  return {
    configDir: config.dir,
    runDir: config.runDir,
    configFile: config.file,
    modelName: model.name,
    trainerProcess: {
      ...tp,
      command: localCommand(config.dir, tp.command),
      env: localEnv(config.dir, tp.env),
    },
    inference: { ...inf, command: localCommand(config.dir, inf.command), env: localEnv(config.dir, inf.env) },
    section: ownKeys(kind, role, role === "inference" ? inf : tp),
    model,
    run,
    gpus: roleGpus(config, role),
    trainerSettings: { ...definition.launch?.processSettings?.(trainerConfig) },
    weightUpdate,
    trains: tp.kind !== "none",
  };
}
