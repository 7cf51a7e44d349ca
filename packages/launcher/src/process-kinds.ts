import type { ProcessContext, ProcessKind, ProcessSpec } from "@air/core";
import { processPlugins } from "./builtins.ts";
import { localCommand, localEnv } from "./local-paths.ts";
import type { RunConfig } from "./sections.ts";

type Section = "trainer_process" | "inference";

/** The process kind a plugin declares for `[section] kind = kind`; throws naming the key when none does. */
function processKind(section: Section, kind: string): ProcessKind {
  for (const plugin of processPlugins()) {
    const found = plugin.launch?.processes?.[section]?.[kind];
    if (found) return found;
  }
  throw new Error(`${section}.kind: no plugin starts a process of kind "${kind}"`);
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
 * What a process kind reads: the launcher's sections (`command` and `env` of `[trainer_process]` and
 * `[inference]` with "./…" paths resolved against the TOML's dir) and the run's trainer plugin's
 * `launch.processSettings`.
 */
export function processContext(config: RunConfig): ProcessContext {
  const { trainer_process: tp, inference: inf, model, run } = config.root;
  const { definition, config: trainerConfig } = config.plugins.trainer;
  const local = <T extends { command?: string[]; env: Record<string, string> }>(s: T) => ({
    ...s,
    command: localCommand(config, s.command),
    env: localEnv(config, s.env),
  });
  return {
    configDir: config.dir,
    runDir: config.runDir,
    configFile: config.file,
    sections: { trainer_process: local(tp), inference: local(inf), model, run },
    trainerSettings: (definition.launch?.processSettings?.(trainerConfig) ?? {}) as Record<string, unknown>,
  };
}

/** A process's spec, without writing its files (preflight reads its program). */
export function processSpec(
  kind: ProcessKind,
  config: RunConfig,
  gpus: { ids: number[]; count: number },
  resumeStep?: number,
): ProcessSpec {
  return kind.spec({ ...processContext(config), gpuIds: gpus.ids, gpuCount: gpus.count, resumeStep });
}
