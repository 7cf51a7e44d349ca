import { existsSync } from "node:fs";
import { join } from "node:path";
import type { WeightsRef } from "@air/core";
import { broadcastStepDir, lastPrimeStepUpTo, STABLE_FILE } from "@air/trainer-prime-rl";
import type { RunConfig } from "./sections.ts";
import { primeRlPaths, primeRlSettings } from "./trainer-toml.ts";

/**
 * The weights a resumed run starts from: with the prime-rl transport, the broadcast the trainer finished for
 * the last completed step, once its STABLE marker exists. The prime-rl step comes from the plugin's persisted
 * step map (empty air steps take no prime-rl step); without one, air step s is prime-rl step s + 1, so the
 * weights after `startStep` air steps are `broadcasts/step_<startStep>`. Undefined when there is none.
 * @example resumeWeights(config, 4) // { version: 4, path: ".../broadcasts/step_4", kind: "full" }
 */
export function resumeWeights(config: RunConfig, startStep: number): WeightsRef | undefined {
  if (startStep <= 0 || config.plugins.trainer.spec !== "prime-rl") return undefined;
  const { runDir } = primeRlPaths(config);
  const dir = broadcastStepDir(runDir, lastPrimeStepUpTo(runDir, startStep - 1));
  if (!existsSync(join(dir, STABLE_FILE))) return undefined;
  const lora = primeRlSettings(config).lora;
  return { version: startStep, path: dir, kind: lora ? "lora" : "full" };
}
