import type { Logger } from "@air/core";

/** What the policy needs from the run besides its config. */
export interface PolicyEnvironment {
  modelName: string;
  /** `[model] max_model_len` of the run, used when the policy section sets none. */
  maxModelLen?: number;
  log: Logger;
  /** Aborts weight updates and model lookups when the run stops. */
  signal: AbortSignal;
  /** An evaluation: generations never need token ids or logprobs (only the text). */
  evaluationOnly?: boolean;
}
