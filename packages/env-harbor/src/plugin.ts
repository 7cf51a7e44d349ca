import { join, resolve } from "node:path";
import { AirError, definePlugin, type Environment, type Example, type PluginContext } from "@air/core";
import { dockerReachable, rolloutStates, SnapshotStore } from "@air/sandbox";
import { type HarborConfig, harborConfigSchema } from "./config.ts";
import { harborLaunch } from "./launch.ts";
import { HarborSandboxes, harborRuntime } from "./sandboxes.ts";
import { HarborSession } from "./session.ts";
import { parseState } from "./session-state.ts";
import type { HarborTask } from "./task.ts";
import { loadHarborTaskSet } from "./task-set.ts";

/**
 * Builds the harbor environment: reads every task folder of the dataset (a bad one stops it, naming folder and
 * file, unless `skip_invalid_tasks`), prepares each task's image (docker) or checks it needs no build (local),
 * and opens one sandbox per rollout.
 * @example const env = await createHarborEnvironment(harborConfigSchema.parse({ dataset: "data/harbor" }), ctx);
 */
export async function createHarborEnvironment(
  config: HarborConfig,
  ctx: PluginContext,
): Promise<Environment> {
  const dataset = resolve(ctx.configDir, config.dataset);
  const wanted = [...new Set([...(config.tasks ?? []), ...(config.eval_tasks ?? [])])];
  const set = await loadHarborTaskSet(dataset, {
    names: config.tasks ? wanted : undefined,
    skipInvalid: config.skip_invalid_tasks,
  }).catch((error: Error) => {
    throw new AirError("ENV_FAILED", error.message, { plugin: "harbor", hook: "create" });
  });
  for (const skipped of set.skipped)
    ctx.log.warn(`harbor: left out (skip_invalid_tasks): ${skipped.message}`);
  if (
    config.runtime === "docker" &&
    config.docker.hosts.length === 0 &&
    !(await dockerReachable(undefined, 5000))
  )
    throw new AirError(
      "ENV_FAILED",
      'no docker engine answers (start one with `bash scripts/ensure-docker`, or set env.runtime = "local")',
      { plugin: "harbor", hook: "create" },
    );
  const root = resolve(ctx.configDir, config.local.root ?? join(ctx.runDir, "harbor-sandboxes"));
  const onState = (state: { id: string; rolloutId?: string; state: string }) =>
    ctx.emit("sandbox:state", state);
  const runtime = new HarborSandboxes(
    harborRuntime(config, { configDir: ctx.configDir, runName: ctx.runDir, root, onState }),
    config,
    root,
  );
  // each turn's sandbox snapshot (rl --resume), in the run dir so a new process finds it
  const snapshots = new SnapshotStore(join(ctx.runDir, "snapshots"));
  const states = rolloutStates(snapshots);
  const tasks = new Map<string, HarborTask>();
  for (const [name, task] of set.tasks) {
    try {
      await runtime.prepare(task);
      tasks.set(name, task);
    } catch (error) {
      if (!config.skip_invalid_tasks) {
        await runtime.close();
        throw new AirError("ENV_FAILED", (error as Error).message, { plugin: "harbor", hook: "create" });
      }
      ctx.log.warn(`harbor: left out (skip_invalid_tasks): ${(error as Error).message}`);
    }
  }
  if (tasks.size === 0) {
    await runtime.close();
    throw new AirError("ENV_FAILED", `no usable task in ${dataset}`, { plugin: "harbor", hook: "create" });
  }
  ctx.log.info(`harbor: ${tasks.size} task(s) from ${dataset}, runtime ${runtime.kind}`);
  const names = (split: "train" | "eval") => {
    const chosen = split === "eval" ? (config.eval_tasks ?? config.tasks) : config.tasks;
    return (chosen ?? [...set.tasks.keys()]).filter((n) => tasks.has(n));
  };
  const examplesOf = (list: string[]): Example[] =>
    list.flatMap((name) =>
      Array.from({ length: config.num_examples_per_task }, (_, i) => ({
        id: config.num_examples_per_task > 1 ? `${name}#${i}` : name,
        task: name,
        data: { taskName: name, index: i },
        score: { priorityMetric: config.metric, directions: {}, baseline: { [config.metric]: 0 } },
      })),
    );
  const taskOf = (example: Example, hook: string): HarborTask => {
    const name = String(example.data?.taskName ?? example.task);
    const task = tasks.get(name);
    if (!task) throw new AirError("ENV_FAILED", `unknown task ${name}`, { plugin: "harbor", hook });
    return task;
  };
  return {
    examples: async (split) => examplesOf(names(split)),
    canFork: true,
    async open(example, info) {
      const task = taskOf(example, "open");
      const { rolloutId, signal } = info;
      const sandbox = await runtime.open(task, { rolloutId, signal });
      const session = { config, sandboxes: runtime, rolloutId, snapshots: { store: snapshots, rolloutId } };
      return new HarborSession(sandbox, task, session);
    },
    // rl --resume: snapshots of rollouts that do not continue go, and saves a kill cut short; of a tree run, those
    // of nodes taken as recorded, once their step is trained
    keepStates: states.keep,
    dropStates: states.drop,
    // rl --resume: a new sandbox from the recorded snapshot (files, modes, directory), the agent's time taken over
    async restore(example, info) {
      const task = taskOf(example, "restore");
      const state = parseState(info.state);
      const { rolloutId, signal } = info;
      const sandbox = await runtime.open(task, { rolloutId, signal, restore: state.snapshot });
      const session = { config, sandboxes: runtime, rolloutId, snapshots: { store: snapshots, rolloutId } };
      const restored = new HarborSession(sandbox, task, session);
      restored.resumeFrom(state);
      return restored;
    },
    close: () => runtime.close(),
  };
}

/**
 * The `harbor` environment plugin: a dataset folder of Harbor task folders, each played in its own image (or a
 * local bubblewrap sandbox when it needs no build), scored by its tests/test.sh in a separate verifier sandbox.
 * @example // [env]
 * // plugin = "harbor"
 * // dataset = "../data/harbor"
 */
export const harborPlugin = definePlugin({
  name: "harbor",
  kind: "env",
  description:
    "Harbor task folders (task.toml, instruction.md, environment/, tests/test.sh) in docker or local sandboxes",
  configSchema: harborConfigSchema,
  create: createHarborEnvironment,
  launch: harborLaunch,
});
