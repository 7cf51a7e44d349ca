import { definePlugin } from "@air/core";
import { noneTrainerConfig } from "./options.ts";

/**
 * A trainer that trains nothing: rollouts only (evaluation, debugging an environment). Batches are counted
 * and dropped; the policy keeps its weights.
 */
export default definePlugin({
  name: "none",
  kind: "trainer",
  description: "rollouts only: batches are dropped and weights never change",
  configSchema: noneTrainerConfig,
  create: (_config, ctx) => {
    let batches = 0;
    return {
      submit: async (batch) => {
        batches++;
        ctx.log.debug(`dropped batch of step ${batch.step} (${batch.samples.length} samples)`);
      },
      waitForWeights: async () => null,
      close: () => ctx.log.debug(`dropped ${batches} batch(es) in all`),
    };
  },
});
