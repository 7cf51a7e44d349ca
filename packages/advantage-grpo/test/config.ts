import { type RecordedRun, runToml } from "@air/core/testing";
import deltaReward from "@air/reward-delta";
import { branching, interleaved } from "@air/strategies";
import { grpoAdvantage } from "../src/index.ts";

/**
 * A run config for the loop tests: the kit's `guess` env and `guesser` policy, the memory trainer, and air's
 * delta reward, grpo advantage and a strategy. `extra` options go into their sections.
 * @example await runGrpo(grpoToml({ mode: "mixed", steps: 1 }))
 */
export function grpoToml(options: {
  mode: "never" | "mixed";
  strategy?: string;
  advantage?: string;
  think?: boolean;
  filterZero?: boolean;
  steps?: number;
  rewards?: string;
}): string {
  return `
logger = []

[run]
name = "fixture"
output_dir = "{{dir}}/out"
max_steps = ${options.steps ?? 2}
log_level = "debug"

[orchestrator]
batch_size = 8
rollouts_per_example = 4
max_concurrent_rollouts = 8
max_off_policy_steps = 0
max_turns = 4
filter_zero_advantages = ${options.filterZero ?? false}

[env]
plugin = "guess"

[policy]
plugin = "guesser"
mode = "${options.mode}"
think = ${options.think ?? false}

[trainer]
plugin = "memory"

[advantage]
plugin = "grpo"
${options.advantage ?? ""}

[strategy]
plugin = "${options.strategy ?? "branching"}"

${options.rewards ?? '[[reward]]\nplugin = "delta"'}
`;
}

/**
 * Runs a config with the kit's plugins plus delta, grpo, branching and interleaved (aborted after 20 s).
 * @example const run = await runGrpo(grpoToml({ mode: "never" }));
 */
export function runGrpo(toml: string): Promise<RecordedRun> {
  return runToml(toml, { plugins: [deltaReward, grpoAdvantage, branching, interleaved], timeoutMs: 20_000 });
}
