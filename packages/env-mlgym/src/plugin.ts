import { join, resolve } from "node:path";
import { AirError, definePlugin, type Environment, type Example, type PluginContext } from "@air/core";
import {
  DockerRuntime,
  dockerClient,
  dockerReachable,
  forkSandbox,
  LocalRuntime,
  type Runtime,
  rolloutStates,
  type Sandbox,
  SnapshotStore,
  type TaskFiles,
  UnsandboxedRuntime,
} from "@air/sandbox";
import { ACI_GUARDS } from "./aci/guards.ts";
import { isMlgymCheckout, loadMlgymAgent } from "./aci/mlgym-agent.ts";
import { buildTaskFiles } from "./bundle.ts";
import { type MlgymConfig, mlgymConfigSchema } from "./config.ts";
import { containerOptions, hostsRuntime } from "./hosts-runtime.ts";
import { mlgymLaunch } from "./launch.ts";
import { MlgymSession } from "./session.ts";
import { parseState } from "./session-state.ts";
import type { SessionSnapshot } from "./session-types.ts";
import type { Task } from "./task.ts";
import { loadTaskSet } from "./task-set.ts";

function makeRuntime(config: MlgymConfig, ctx: PluginContext): Runtime {
  const onState = (state: { id: string; rolloutId?: string; state: string; command?: string }) =>
    ctx.emit("sandbox:state", state);
  if (config.runtime === "local") {
    const root = resolve(ctx.configDir, config.local.root ?? join(ctx.runDir, "sandboxes"));
    const l = config.local;
    if (l.isolation === "none") {
      ctx.log.warn(
        'mlgym: local.isolation = "none": the agent runs as you, unsandboxed, and can read and forge evaluations' +
          (process.getuid?.() === 0 ? " (and, as root, kill or overwrite anything on this machine)" : ""),
      );
      return new UnsandboxedRuntime({ root, python: l.python, agentInit: ACI_GUARDS, onState });
    }
    return new LocalRuntime({
      root,
      python: l.python,
      maxProcesses: l.max_processes,
      memoryMb: l.memory_mb,
      stageNext: l.stage_next,
      maxStaged: l.max_staged,
      agentInit: ACI_GUARDS,
      onState,
    });
  }
  const d = config.docker;
  if (d.hosts.length > 0) return hostsRuntime(config, ctx, onState);
  return new DockerRuntime({
    ...containerOptions(config, ctx),
    gpuIds: d.gpu_ids.length > 0 ? d.gpu_ids : (ctx.envGpuIds ?? []).map(String),
    poolSize: d.pool_size,
    onState,
  });
}

/**
 * Builds the mlgym environment: loads every task YAML up front (bad YAML fails here, naming the file), lays
 * out each task's workspace and evaluation files, and opens one sandbox per rollout.
 * @example const env = await createMlgymEnvironment({ ...config }, ctx); const [example] = await env.examples("train");
 */
export async function createMlgymEnvironment(given: MlgymConfig, ctx: PluginContext): Promise<Environment> {
  const config = { ...given, max_steps: given.max_steps ?? ctx.maxTurns };
  const root = resolve(ctx.configDir, config.mlgym_root);
  const tasks = new Map<string, { task: Task; files: TaskFiles }>();
  const cacheDir = join(ctx.runDir, "mlgym-tasks");
  const set = await loadTaskSet(config, root);
  for (const [id, task] of set.byId) tasks.set(id, { task, files: await buildTaskFiles(task, cacheDir) });
  const idOf = (name: string) => set.idOf.get(name) ?? name;
  if (
    config.runtime === "docker" &&
    config.docker.hosts.length === 0 &&
    !(await dockerReachable(dockerClient(), 5000))
  ) {
    throw new AirError(
      "ENV_FAILED",
      'no docker engine answers (start one with `bash scripts/ensure-docker`, or set env.runtime = "local")',
      { plugin: "mlgym", hook: "create" },
    );
  }
  const runtime = makeRuntime(config, ctx);
  if (runtime instanceof LocalRuntime) await runtime.check();
  const python = config.runtime === "docker" ? config.docker.python : "python";
  const useMlgymTools = config.aci === "mlgym" || (config.aci === "auto" && isMlgymCheckout(root));
  const mlgymAgent = useMlgymTools ? await loadMlgymAgent(root, config.agent_config) : undefined;
  ctx.log.info(`mlgym: ${tasks.size} task(s) from ${root}, runtime ${runtime.kind}`);
  // The latest audit's noise per task (ctx.audit, read by the launcher); without it score-jump uses the ranges.
  if (ctx.audit?.unreadable)
    ctx.log.warn(
      `mlgym: no evaluation noise from ${ctx.audit.source} (${ctx.audit.unreadable}); score-jump uses the score ranges alone`,
    );
  const noise = ctx.audit?.noise ?? {};
  // each turn's sandbox snapshot (rl --resume), in the run dir so a new process finds it
  const snapshots = new SnapshotStore(join(ctx.runDir, "snapshots"));
  const states = rolloutStates(snapshots);

  const examplesOf = (names: string[]): Example[] =>
    [...new Set(names.map(idOf))].flatMap((id) => {
      const { task } = tasks.get(id) as { task: Task };
      return Array.from({ length: config.num_examples_per_task }, (_, i) => ({
        id: config.num_examples_per_task > 1 ? `${task.id}#${i}` : task.id,
        task: task.id,
        data: { taskName: task.id, index: i },
        score: {
          priorityMetric: task.priorityMetric,
          directions: task.directions,
          baseline: task.baselineScores,
          ranges: task.scoreRanges,
        },
      }));
    });

  const entryOf = (example: Example, hook: "open" | "restore") => {
    const name = String(example.data?.taskName ?? example.task);
    const entry = tasks.get(idOf(name));
    if (!entry) throw new AirError("ENV_FAILED", `unknown task ${name}`, { plugin: "mlgym", hook });
    return entry;
  };
  type Entry = ReturnType<typeof entryOf>;
  type OpenInfo = { rolloutId: string; signal: AbortSignal };
  // a session whose forks (tree rollouts) store their snapshots under the node's id, or <rollout>-fork<n>
  const sessionOf = (entry: Entry, sandbox: Sandbox, info: OpenInfo): MlgymSession => {
    let forks = 0;
    return new MlgymSession(runtime, sandbox, entry.task, {
      config,
      python,
      mlgymAgent,
      noise: noise[entry.task.id],
      reopen: (s, rolloutId) =>
        openFrom(entry, s, {
          rolloutId: rolloutId ?? `${info.rolloutId}-fork${++forks}`,
          signal: info.signal,
        }),
      snapshots: { store: snapshots, rolloutId: info.rolloutId },
    });
  };
  const openFrom = async (
    entry: Entry,
    snap: Uint8Array | SessionSnapshot | undefined,
    info: OpenInfo,
  ): Promise<MlgymSession> => {
    const workspace = snap instanceof Uint8Array ? snap : snap?.workspace;
    const options = { rolloutId: info.rolloutId, signal: info.signal };
    const sandbox =
      workspace === undefined || workspace instanceof Uint8Array
        ? await runtime.acquire(entry.files, { ...options, snapshot: workspace })
        : await forkSandbox(runtime, workspace, entry.files, options);
    const session = sessionOf(entry, sandbox, info);
    if (snap && !(snap instanceof Uint8Array)) await session.restore(snap);
    return session;
  };

  return {
    examples: async (split) =>
      examplesOf(split === "eval" ? (config.eval_tasks ?? config.tasks) : config.tasks),
    canFork: true,
    async open(example, info) {
      const entry = entryOf(example, "open");
      return openFrom(entry, example.data?.snapshot as Uint8Array | SessionSnapshot | undefined, info);
    },
    // rl --resume: snapshots of rollouts that do not continue go, and saves a kill cut short; of a tree run, those
    // of nodes taken as recorded, once their step is trained
    keepStates: states.keep,
    dropStates: states.drop,
    // rl --resume: a new sandbox from the recorded snapshot, the session's counters taken over
    async restore(example, info) {
      const entry = entryOf(example, "restore");
      const state = parseState(info.state);
      const { rolloutId, signal } = info;
      const sandbox = await runtime.acquire(entry.files, { rolloutId, signal, restore: state.snapshot });
      const session = sessionOf(entry, sandbox, info);
      await session.resumeFrom(state);
      return session;
    },
    close: () => runtime.close(),
  };
}

/**
 * The `mlgym` environment plugin: MLGym tasks in docker containers or local bubblewrap sandboxes.
 * @example // configs/quickstart.toml
 * // [env]
 * // plugin = "mlgym"
 * // tasks = ["apartmentRent"]
 */
export const mlgymPlugin = definePlugin({
  name: "mlgym",
  kind: "env",
  description: "MLGym-format tasks with MLGym's agent commands, in docker containers or local sandboxes",
  configSchema: mlgymConfigSchema,
  create: createMlgymEnvironment,
  launch: mlgymLaunch,
});
