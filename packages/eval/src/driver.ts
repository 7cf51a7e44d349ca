import {
  attemptDeps,
  type Environment,
  type EventBus,
  type Example,
  type Logger,
  type OrchestratorConfig,
  type PendingWork,
  type Policy,
  type RewardEntry,
  rolloutWithRetries,
  Semaphore,
  type Trajectory,
} from "@air/core";

export interface EvalRolloutParts {
  env: Environment;
  policy: Policy;
  rewards: RewardEntry[];
  names: { env: string; policy: string };
  bus: EventBus;
  pending: PendingWork;
  log: Logger;
  signal: AbortSignal;
  orchestrator: OrchestratorConfig;
}

/**
 * Runs `samplesPerExample` rollouts of every example with core's `runRollout` and `applyRewards` (no trainer),
 * at most `maxConcurrent` at a time, retrying a failed rollout `orchestrator.rollout_retries` times. A rollout
 * that still fails comes back with `stopReason: "failed"`. Rollouts of one example share the group
 * `eval:<example id>`; all carry `step` = the policy version.
 * @example const trajectories = await runEvalRollouts(parts, examples, 4, 8);
 */
export async function runEvalRollouts(
  parts: EvalRolloutParts,
  examples: Example[],
  samplesPerExample: number,
  maxConcurrent: number,
  onDone?: (trajectory: Trajectory) => void,
): Promise<Trajectory[]> {
  const semaphore = new Semaphore(maxConcurrent);
  const deps = attemptDeps(parts, parts);
  const step = parts.policy.version;
  let counter = 0;
  const one = async (example: Example): Promise<Trajectory> => {
    const release = await semaphore.acquire();
    try {
      const trajectory = await rolloutWithRetries(deps, {
        rolloutId: `eval-${counter++}`,
        example,
        groupId: `eval:${example.id}`,
        step,
        split: "eval",
      });
      onDone?.(trajectory);
      return trajectory;
    } finally {
      release();
    }
  };
  return Promise.all(
    examples.flatMap((example) => Array.from({ length: samplesPerExample }, () => one(example))),
  );
}
