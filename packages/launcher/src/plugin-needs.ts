import type { AuditFindings, CheckResult, LaunchContext, PluginNeeds, ResolvedPlugin } from "@air/core";
import type { RunConfig } from "./sections.ts";

/** Every plugin section of a run, each with its TOML path (for messages), in the config's order. */
export function allPlugins(config: RunConfig): ResolvedPlugin[] {
  const p = config.plugins;
  return [p.env, p.policy, p.trainer, p.advantage, p.strategy, ...p.rewards, ...p.loggers];
}

/**
 * What every plugin of the run asks of the launcher (its `launch.needs` hook), merged: the launcher acts on
 * these and never reads a plugin's config by name.
 * @example pluginNeeds(allPlugins(config), launchContext(config)).dockerImages // ["air-mlgym-test:latest"]
 */
export function pluginNeeds(
  plugins: readonly ResolvedPlugin[],
  ctx: LaunchContext,
): Required<Pick<PluginNeeds, "dockerImages">> & PluginNeeds {
  const merged: Required<Pick<PluginNeeds, "dockerImages">> & PluginNeeds = { dockerImages: [] };
  for (const p of plugins) {
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
 * @example const results = await pluginPreflight(plan.plugins, plan.launch, audit);
 */
export async function pluginPreflight(
  plugins: readonly ResolvedPlugin[],
  launch: LaunchContext,
  audit?: AuditFindings,
): Promise<CheckResult[]> {
  const ctx = { ...launch, audit };
  const out: CheckResult[] = [];
  for (const p of plugins) {
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
