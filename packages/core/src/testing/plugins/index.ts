import { PluginRegistry } from "../../registry.ts";
import { lastScoreReward, meanAdvantage, memoryTrainer, perTurnStrategy } from "./basic.ts";
import { countingEnv, randomPolicy } from "./counting.ts";
import { guessEnv, guesserPolicy } from "./guess.ts";
import { notebookEnv } from "./notebook.ts";
import { researchEnv, researcherPolicy, scoreGainReward } from "./research.ts";

export { lastScoreReward, meanAdvantage, memoryTrainer, perTurnStrategy } from "./basic.ts";
export { countingEnv, probes, randomPolicy, resetProbes } from "./counting.ts";
export { guessEnv, guesserPolicy, renderPrompt } from "./guess.ts";
export { notebookEnv } from "./notebook.ts";
export { researchEnv, researcherPolicy, scoreGainReward } from "./research.ts";

/**
 * Every in-memory plugin of the kit: real plugins (definePlugin, zod options) needing no server or GPU.
 * @example for (const p of TEST_PLUGINS) registry.register(p);
 */
export const TEST_PLUGINS = [
  countingEnv,
  randomPolicy,
  guessEnv,
  guesserPolicy,
  notebookEnv,
  researchEnv,
  researcherPolicy,
  lastScoreReward,
  scoreGainReward,
  meanAdvantage,
  perTurnStrategy,
  memoryTrainer,
] as const;

/**
 * A registry with every in-memory plugin of the kit; `register` more (e.g. a real reward) on the result.
 * @example const registry = testRegistry().register(deltaReward);
 */
export function testRegistry(): PluginRegistry {
  const registry = new PluginRegistry();
  for (const p of TEST_PLUGINS) registry.register(p);
  return registry;
}
