import {
  attemptDeps,
  type Environment,
  type Example,
  type Logger,
  type OrchestratorConfig,
  type PluginHost,
  type Policy,
  rolloutWithRetries,
  type Trajectory,
} from "@air/core";
import { scriptedConfigSchema, scriptedPolicyPlugin } from "./plugin.ts";

/** One scripted rollout: where it runs and what it types. */
export interface ScriptedRollout {
  /** The host that made `env`: the policy is created (and closed) by it, events go on its bus. */
  host: Pick<PluginHost, "create" | "bus" | "signal" | "pending">;
  env: Environment;
  /** The env's name, as the rollout records it. */
  envName: string;
  example: Example;
  /** The agent's commands, one per turn. */
  commands: string[];
  rolloutId: string;
  groupId: string;
  /** The run's `[orchestrator]` (timeouts); the rollout gets no retries. */
  orchestrator: OrchestratorConfig;
  /** The turn limit (default: one turn per command). */
  maxTurns?: number;
  log: Logger;
  /** Wraps the scripted policy (e.g. a replay answering a stored parse error as it was). */
  wrap?: (policy: Policy) => Policy;
}

/**
 * Plays `commands` in one fresh rollout of `env` with the `scripted` policy, through core's own rollout code
 * (`attemptDeps`, `rolloutWithRetries`: the same path as `rl` and `eval`, split "eval", step 0, no retry): what
 * the audit's probes and `replay` run. A failure comes back as a failed trajectory.
 * @example const t = await scriptedRollout({ host, env, envName: "mlgym", example, commands: ["validate"], rolloutId: "probe-0", groupId: "audit:t", orchestrator, log });
 */
export async function scriptedRollout(r: ScriptedRollout): Promise<Trajectory> {
  const scripted = await r.host.create(
    {
      kind: "policy",
      path: "policy",
      spec: "scripted",
      definition: scriptedPolicyPlugin,
      config: scriptedConfigSchema.parse({ commands: r.commands }),
    },
    `scripted:${r.rolloutId}`,
  );
  const orchestrator = { ...r.orchestrator, max_turns: r.maxTurns ?? r.commands.length, rollout_retries: 0 };
  const deps = attemptDeps(
    {
      env: r.env,
      policy: r.wrap ? r.wrap(scripted) : scripted,
      rewards: [],
      names: { env: r.envName, policy: "scripted" },
    },
    { bus: r.host.bus, log: r.log, signal: r.host.signal, pending: r.host.pending, orchestrator },
  );
  return rolloutWithRetries(deps, {
    rolloutId: r.rolloutId,
    example: r.example,
    groupId: r.groupId,
    step: 0,
    split: "eval",
  });
}
