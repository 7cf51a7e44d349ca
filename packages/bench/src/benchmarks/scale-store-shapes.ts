import type { StepShape } from "./store-record.ts";

/** 30 turns to ~7.7k prompt tokens: a 400-character reply and a 600-character observation a turn. */
export const LONG: StepShape = {
  perStep: 64,
  turns: 30,
  completion: `DISCUSSION\n${"I will tune the learning rate and validate again. ".repeat(7)}\n\`\`\`\npython train.py\n\`\`\``,
  observation: "epoch 3 | step 120/400 | loss 0.4127 | val_loss 0.4419 | lr 2.0e-04\n".repeat(9),
  promptTokens: (i) => 400 + 253 * i,
};
/** One 50-turn trajectory whose prompt reaches 32k tokens (~2,600 new characters a turn). */
export const HUGE: StepShape = {
  perStep: 1,
  turns: 50,
  completion: LONG.completion,
  observation: "epoch 3 | step 120/400 | loss 0.4127 | val_loss 0.4419 | lr 2.0e-04\n".repeat(32),
  promptTokens: (i) => 400 + 650 * i,
};
/** The million-turn store: 100 steps × 1,000 trajectories × 10 turns, ~300-character observations. */
export const MILLION: StepShape = {
  perStep: 1000,
  turns: 10,
  observation: "epoch 3 | step 120/400 | loss 0.4127 | val_loss 0.4419\n".repeat(6),
};
