import type { AuditFindings, CheckResult, PluginNeeds, ResolvedPlugin } from "@air/core";
import { launchContext } from "./launch-context.ts";
import type { RunConfig } from "./sections.ts";

/** Every plugin section of a run, each with its TOML path (for messages). */
function allPlugins(config: RunConfig): ResolvedPlugin[] {
  const p = config.plugins;
  return [p.env, p.policy, p.trainer, p.advantage, p.strategy, ...p.rewards, ...p.loggers];
}

/**
 * What every plugin of the run asks of the launcher (its `launch.needs` hook), merged: the launcher acts on
 * these and never reads a plugin's config by name.
 * @example pluginNeeds(config).dockerImages // ["air-mlgym-test:latest"]
 */
export function pluginNeeds(config: RunConfig): Required<Pick<PluginNeeds, "dockerImages">> & PluginNeeds {
  const ctx = launchContext(config);
  const merged: Required<Pick<PluginNeeds, "dockerImages">> & PluginNeeds = { dockerImages: [] };
  for (const p of allPlugins(config)) {
    const needs = p.definition.launch?.needs?.(p.config, ctx);
    if (!needs) continue;
    merged.dockerImages.push(...(needs.dockerImages ?? []).filter((i) => !merged.dockerImages.includes(i)));
    merged.dockerImagesKey ??= needs.dockerImagesKey;
    merged.inferenceUrl ??= needs.inferenceUrl;
    merged.weightUpdate ??= needs.weightUpdate;
    merged.trainerFiles ??= needs.trainerFiles;
    if (needs.dockerHosts?.length) merged.dockerHosts = [...(merged.dockerHosts ?? []), ...needs.dockerHosts];
  }
  return merged;
}

/**
 * Every plugin's own preflight checks (`launch.preflight`, given the latest audit's findings), in the order of the
 * config's sections; a hook that throws becomes a failed check naming the section.
 * @example const results = await pluginPreflight(config);
 */
export async function pluginPreflight(config: RunConfig, audit?: AuditFindings): Promise<CheckResult[]> {
  const ctx = { ...launchContext(config), audit };
  const out: CheckResult[] = [];
  for (const p of allPlugins(config)) {
    const hook = p.definition.launch?.preflight;
    if (!hook) continue;
    try {
      out.push(...(await hook(p.config, ctx)));
    } catch (error) {
      out.push({
        name: `[${p.path}] ${p.definition.name} checks`,
        status: "fail",
        message: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return out;
}
