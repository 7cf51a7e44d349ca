import type { CheckResult } from "@air/core";
import { launchContext } from "./launch-context.ts";
import type { RunConfig } from "./sections.ts";

/**
 * `rl validate`'s task loading: every plugin's `launch.tasks` hook (the envs: MLGym and Harbor tasks read from
 * their files; a `skip` when their root is not on this machine). A hook that throws is a failure naming the section.
 * @example (await pluginTasks(config)).filter((r) => r.status === "fail")
 */
export async function pluginTasks(config: RunConfig): Promise<CheckResult[]> {
  const p = config.plugins;
  const ctx = launchContext(config);
  const out: CheckResult[] = [];
  for (const plugin of [p.env, p.policy, p.trainer, p.advantage, p.strategy, ...p.rewards, ...p.loggers]) {
    const hook = plugin.definition.launch?.tasks;
    if (!hook) continue;
    try {
      out.push(...(await hook(plugin.config, ctx)));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      out.push({ name: `[${plugin.path}] ${plugin.definition.name} tasks`, status: "fail", message });
    }
  }
  return out;
}
