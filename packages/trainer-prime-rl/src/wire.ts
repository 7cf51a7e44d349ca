import type { Sample } from "@air/core";
import {
  arrayHeader,
  concat,
  encodeFloats,
  encodeFloatsOrNil,
  encodePlain,
  encodeStruct,
} from "./msgpack-struct.ts";

/**
 * One `TrainingSample` of prime-rl v0.8.0 (`src/prime_rl/transport/types.py`), field for field.
 * `null` stands for Python's None. Per-token arrays span the whole sequence (prompt + completion).
 */
export interface TrainingSampleWire {
  token_ids: number[];
  /** true where the token was sampled by the policy (trained on). */
  mask: boolean[];
  logprobs: number[];
  temperatures: number[];
  env_name: string;
  ref_logprobs: number[] | null;
  rl_weights: number[] | null;
  ce_weights: number[] | null;
  ref_kl_weights: number[] | null;
  advantages: number[] | null;
}

/** prime-rl v0.8.0's `TrainingBatch`. */
export interface TrainingBatchWire {
  examples: TrainingSampleWire[];
  step: number;
  run_idx: number | null;
}

/** Field order of msgspec's positional layout of `TrainingSample` (13 fields). */
export const TRAINING_SAMPLE_FIELDS = [
  "token_ids",
  "mask",
  "logprobs",
  "temperatures",
  "env_name",
  "ref_logprobs",
  "mm_kwargs",
  "routed_experts",
  "mm_token_type_ids",
  "rl_weights",
  "ce_weights",
  "ref_kl_weights",
  "advantages",
] as const;

/** One `TrainingSample` in msgspec's array layout (all 13 fields). */
export function encodeTrainingSample(s: TrainingSampleWire): Uint8Array[] {
  return encodeStruct([
    encodePlain(s.token_ids),
    encodePlain(s.mask),
    encodeFloats(s.logprobs),
    encodeFloats(s.temperatures),
    encodePlain(s.env_name),
    encodeFloatsOrNil(s.ref_logprobs),
    null, // mm_kwargs
    null, // routed_experts
    null, // mm_token_type_ids
    encodeFloatsOrNil(s.rl_weights),
    encodeFloatsOrNil(s.ce_weights),
    encodeFloatsOrNil(s.ref_kl_weights),
    encodeFloatsOrNil(s.advantages),
  ]);
}

/**
 * Encodes a batch exactly as prime-rl v0.8.0's orchestrator does (`msgspec.msgpack.Encoder().encode(batch)`):
 * msgspec writes array_like structs with every field, `omit_defaults` notwithstanding, so None fields (and
 * `run_idx`) are nil; float fields are float64 even when integral, ints stay ints.
 * Checked byte for byte against prime-rl's own structs (`golden/v0.8`).
 * @example const bytes = encodeTrainingBatch({ examples: [], step: 1, run_idx: null });
 */
export function encodeTrainingBatch(batch: TrainingBatchWire): Uint8Array {
  const examples = [arrayHeader(batch.examples.length), ...batch.examples.flatMap(encodeTrainingSample)];
  return concat(
    encodeStruct([
      concat(examples),
      encodePlain(batch.step),
      batch.run_idx === null ? null : encodePlain(batch.run_idx),
    ]),
  );
}

/**
 * Turns air's Sample into a TrainingSample: mask from `lossMask`, the sampling temperature on every token
 * (as prime-rl's TrainSink does), advantages per token.
 * @example toTrainingSample(sample, "mlgym")
 */
export function toTrainingSample(sample: Sample, envName: string): TrainingSampleWire {
  const n = sample.tokenIds.length;
  for (const [name, values] of [
    ["lossMask", sample.lossMask],
    ["logprobs", sample.logprobs],
    ["advantages", sample.advantages],
  ] as const) {
    if (values.length !== n)
      throw new RangeError(
        `sample ${sample.trajectoryId}: ${name} has ${values.length} entries, tokenIds ${n}`,
      );
  }
  return {
    token_ids: sample.tokenIds,
    mask: sample.lossMask.map((m) => m !== 0),
    logprobs: sample.logprobs,
    temperatures: new Array<number>(n).fill(sample.temperature),
    env_name: envName,
    ref_logprobs: null,
    rl_weights: null,
    ce_weights: null,
    ref_kl_weights: null,
    advantages: sample.advantages,
  };
}
