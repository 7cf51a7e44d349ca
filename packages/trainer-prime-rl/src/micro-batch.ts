import { decode } from "@msgpack/msgpack";
import {
  arrayHeader,
  concat,
  encodeFloats,
  encodeFloatsOrNil,
  encodePlain,
  encodeStruct,
} from "./msgpack-struct.ts";

/**
 * prime-rl's `MicroBatch` (newest codec; `transports/rollouts/types.py`), text-only: the multimodal and
 * routed-experts fields are always None here. One packed sequence of several samples, per-token arrays
 * over the whole packed length.
 */
export interface MicroBatchWire {
  input_ids: number[];
  loss_mask: boolean[];
  advantages: number[];
  inference_logprobs: number[];
  /** Restarts at 0 for every packed sample. */
  position_ids: number[];
  /** Length of each packed sample (the last one includes padding). */
  sequence_lengths: number[];
  temperatures: number[];
  env_names: string[];
  seq_lens: number[];
  ref_logprobs: number[] | null;
  rl_weights: number[] | null;
  ce_weights: number[] | null;
  ref_kl_weights: number[] | null;
}

/** msgspec's positional order of `MicroBatch` (16 fields). */
export const MICRO_BATCH_FIELDS = [
  "input_ids",
  "loss_mask",
  "advantages",
  "inference_logprobs",
  "position_ids",
  "sequence_lengths",
  "temperatures",
  "env_names",
  "seq_lens",
  "ref_logprobs",
  "routed_experts",
  "mm_kwargs",
  "mm_token_type_ids",
  "rl_weights",
  "ce_weights",
  "ref_kl_weights",
] as const;

function microBatchParts(m: MicroBatchWire): Uint8Array[] {
  return encodeStruct([
    encodePlain(m.input_ids),
    encodePlain(m.loss_mask),
    encodeFloats(m.advantages),
    encodeFloats(m.inference_logprobs),
    encodePlain(m.position_ids),
    encodePlain(m.sequence_lengths),
    encodeFloats(m.temperatures),
    encodePlain(m.env_names),
    encodePlain(m.seq_lens),
    encodeFloatsOrNil(m.ref_logprobs),
    null, // routed_experts
    null, // mm_kwargs
    null, // mm_token_type_ids
    encodeFloatsOrNil(m.rl_weights),
    encodeFloatsOrNil(m.ce_weights),
    encodeFloatsOrNil(m.ref_kl_weights),
  ]);
}

/**
 * Encodes one data rank's `list[MicroBatch]` as prime-rl's sender does (`msgspec.msgpack.Encoder().encode`):
 * the bytes of `rollouts/step_N/rank_R.bin` or of one ZMQ data frame.
 * @example const bytes = encodeMicroBatches(packSamples(samples, { seqLen: 4096, dataWorldSize: 1 })[0]);
 */
export function encodeMicroBatches(batches: MicroBatchWire[]): Uint8Array {
  const parts: Uint8Array[] = [arrayHeader(batches.length)];
  for (const m of batches) parts.push(...microBatchParts(m));
  return concat(parts);
}

function list<T>(value: unknown, name: string, check: (v: unknown) => v is T): T[] {
  if (!Array.isArray(value) || !value.every(check))
    throw new TypeError(`MicroBatch.${name} is not a list of the right type`);
  return value as T[];
}
const isNumber = (v: unknown): v is number => typeof v === "number";
const isBool = (v: unknown): v is boolean => typeof v === "boolean";
const isString = (v: unknown): v is string => typeof v === "string";

function optionalFloats(value: unknown, name: string): number[] | null {
  return value === undefined || value === null ? null : list(value, name, isNumber);
}

/**
 * Decodes a `list[MicroBatch]` (the inverse of `encodeMicroBatches`; trailing default fields may be absent).
 * Refuses multimodal or routed-experts batches, which air never writes.
 * @example decodeMicroBatches(readFileSync("rollouts/step_1/rank_0.bin"))
 */
export function decodeMicroBatches(bytes: Uint8Array): MicroBatchWire[] {
  const raw = decode(bytes);
  if (!Array.isArray(raw)) throw new TypeError("not a list of MicroBatch");
  return raw.map((row, i) => {
    if (!Array.isArray(row) || row.length < 9 || row.length > MICRO_BATCH_FIELDS.length)
      throw new TypeError(`micro batch ${i} is not a MicroBatch array`);
    for (const k of [10, 11, 12])
      if (row[k] !== undefined && row[k] !== null)
        throw new TypeError(
          `micro batch ${i}: ${MICRO_BATCH_FIELDS[k]} is set (air reads text-only batches)`,
        );
    return {
      input_ids: list(row[0], "input_ids", isNumber),
      loss_mask: list(row[1], "loss_mask", isBool),
      advantages: list(row[2], "advantages", isNumber),
      inference_logprobs: list(row[3], "inference_logprobs", isNumber),
      position_ids: list(row[4], "position_ids", isNumber),
      sequence_lengths: list(row[5], "sequence_lengths", isNumber),
      temperatures: list(row[6], "temperatures", isNumber),
      env_names: list(row[7], "env_names", isString),
      seq_lens: list(row[8], "seq_lens", isNumber),
      ref_logprobs: optionalFloats(row[9], "ref_logprobs"),
      rl_weights: optionalFloats(row[13], "rl_weights"),
      ce_weights: optionalFloats(row[14], "ce_weights"),
      ref_kl_weights: optionalFloats(row[15], "ref_kl_weights"),
    };
  });
}
