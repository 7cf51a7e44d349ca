import type { MicroBatchWire } from "./micro-batch.ts";
import { balancedPartition } from "./partition.ts";
import type { TrainingSampleWire } from "./wire.ts";

/** How the newest prime-rl orchestrator packs a step (`OrchestratorConfig`: seq_len, num_train_workers, pad_to_multiple_of). */
export interface PackOptions {
  /** The trainer's `[model] seq_len`: longer samples are truncated, bins hold at most this many tokens. */
  seqLen: number;
  /** Data-parallel ranks of the trainer (`num_train_workers`): one micro-batch list per rank. */
  dataWorldSize: number;
  /** Pad each packed micro batch to a multiple of this (the trainer's context-parallel degree). Default 1. */
  padToMultipleOf?: number;
}

/**
 * prime-rl's bin cost without a model config (`build_bin_cost(None)`): the token count. prime-rl estimates
 * FLOPs from the model's HF config when it can load it; that only changes which rank gets which bin.
 */
function binCost(lengths: number[]): number {
  return lengths.reduce((n, l) => n + l, 0);
}

/** `prepare_sample`: one sample as a one-sequence micro batch, truncated to seq_len. */
function prepareSample(s: TrainingSampleWire, seqLen: number): MicroBatchWire {
  if (s.env_name === "all")
    throw new RangeError("env_name 'all' is reserved by prime-rl for aggregate metrics");
  const n = Math.min(s.token_ids.length, seqLen);
  const advantages = s.advantages ?? new Array<number>(s.token_ids.length).fill(0);
  if (s.advantages === null && s.mask.some((m, i) => m && (s.rl_weights === null || s.rl_weights[i] !== 0)))
    throw new RangeError(`sample from env '${s.env_name}' has trainable tokens but no advantages`);
  const cut = <T>(values: T[]) => values.slice(0, n);
  const cutOrNull = (values: number[] | null) => (values === null ? null : cut(values));
  return {
    input_ids: cut(s.token_ids),
    loss_mask: cut(s.mask),
    advantages: cut(advantages),
    inference_logprobs: cut(s.logprobs),
    position_ids: Array.from({ length: n }, (_, i) => i),
    sequence_lengths: [n],
    temperatures: cut(s.temperatures),
    env_names: new Array<string>(n).fill(s.env_name),
    seq_lens: [n],
    ref_logprobs: cutOrNull(s.ref_logprobs),
    rl_weights: cutOrNull(s.rl_weights),
    ce_weights: cutOrNull(s.ce_weights),
    ref_kl_weights: cutOrNull(s.ref_kl_weights),
  };
}

const STREAM_FILL = { rl_weights: 1, ce_weights: 0, ref_kl_weights: 0 } as const;
type Stream = keyof typeof STREAM_FILL;

/** `_materialize_bin`: concatenates a bin's samples; a stream one sample carries is filled in for the others. */
function materialize(bin: MicroBatchWire[]): MicroBatchWire {
  const hasRef = bin.some((s) => s.ref_logprobs !== null);
  const streams = Object.fromEntries(
    (Object.keys(STREAM_FILL) as Stream[]).map((k) => [
      k,
      bin.some((s) => s[k] !== null) ? ([] as number[]) : null,
    ]),
  ) as Record<Stream, number[] | null>;
  const out: MicroBatchWire = {
    input_ids: [],
    loss_mask: [],
    advantages: [],
    inference_logprobs: [],
    position_ids: [],
    sequence_lengths: [],
    temperatures: [],
    env_names: [],
    seq_lens: [],
    ref_logprobs: hasRef ? [] : null,
    ...streams,
  };
  for (const s of bin) {
    const n = s.input_ids.length;
    out.input_ids.push(...s.input_ids);
    out.loss_mask.push(...s.loss_mask);
    out.advantages.push(...s.advantages);
    out.inference_logprobs.push(...s.inference_logprobs);
    out.position_ids.push(...s.position_ids);
    out.temperatures.push(...s.temperatures);
    out.env_names.push(...s.env_names);
    out.ref_logprobs?.push(...(s.ref_logprobs ?? new Array<number>(n).fill(0)));
    for (const k of Object.keys(STREAM_FILL) as Stream[])
      out[k]?.push(...(s[k] ?? new Array<number>(n).fill(STREAM_FILL[k])));
    out.seq_lens.push(...s.seq_lens);
    out.sequence_lengths.push(n);
  }
  return out;
}

function binLength(bin: MicroBatchWire[]): number {
  return bin.reduce((n, s) => n + s.input_ids.length, 0);
}

/** `_MicroBatchBin.split_by_workload`: heaviest sample first onto the lighter side. */
function splitByWorkload(bin: MicroBatchWire[]): [MicroBatchWire[], MicroBatchWire[]] {
  const ranked = [...bin].sort((a, b) => binCost([b.input_ids.length]) - binCost([a.input_ids.length]));
  const left: MicroBatchWire[] = [];
  const right: MicroBatchWire[] = [];
  let lw = 0;
  let rw = 0;
  for (const s of ranked) {
    const w = binCost([s.input_ids.length]);
    if (lw <= rw) {
      left.push(s);
      lw += w;
    } else {
      right.push(s);
      rw += w;
    }
  }
  return [left, right];
}

/** `packed_samples_into_micro_bs`: first-fit decreasing into seq_len bins, then split bins up to a multiple of the ranks. */
function packBins(samples: MicroBatchWire[], seqLen: number, ranks: number): MicroBatchWire[] {
  const sorted = [...samples].sort((a, b) => b.input_ids.length - a.input_ids.length);
  const bins: MicroBatchWire[][] = [];
  for (const s of sorted) {
    const bin = bins.find((b) => binLength(b) + s.input_ids.length <= seqLen);
    if (bin) bin.push(s);
    else bins.push([s]);
  }
  if (ranks > 1) {
    const target = Math.max(Math.ceil(bins.length / ranks) * ranks, ranks);
    while (bins.length < target) {
      let pick = -1;
      let pickCost = -1;
      bins.forEach((b, i) => {
        const cost = binCost(b.map((s) => s.input_ids.length));
        // Python max((workload, idx)): the largest workload, the last index on a tie.
        if (b.length > 1 && cost >= pickCost) {
          pick = i;
          pickCost = cost;
        }
      });
      if (pick < 0) break;
      const [left, right] = splitByWorkload(bins[pick] as MicroBatchWire[]);
      bins[pick] = left;
      bins.push(right);
    }
  }
  return bins.map(materialize);
}

/** `pad_micro_batch`: pads with token 1, masked, position ids from 0, temperature 1, env name "". */
function padMicroBatch(m: MicroBatchWire, multiple: number): MicroBatchWire {
  const pad = (multiple - (m.input_ids.length % multiple)) % multiple;
  if (!(multiple > 1 && pad > 0)) return m;
  const last = m.sequence_lengths.length - 1;
  m.input_ids.push(...new Array<number>(pad).fill(1));
  m.advantages.push(...new Array<number>(pad).fill(0));
  m.loss_mask.push(...new Array<boolean>(pad).fill(false));
  m.position_ids.push(...Array.from({ length: pad }, (_, i) => i));
  m.sequence_lengths[last] = (m.sequence_lengths[last] ?? 0) + pad;
  m.seq_lens[m.seq_lens.length - 1] = (m.seq_lens[m.seq_lens.length - 1] ?? 0) + pad;
  m.inference_logprobs.push(...new Array<number>(pad).fill(0));
  m.temperatures.push(...new Array<number>(pad).fill(1));
  m.ref_logprobs?.push(...new Array<number>(pad).fill(0));
  for (const k of Object.keys(STREAM_FILL) as Stream[]) m[k]?.push(...new Array<number>(pad).fill(0));
  m.env_names.push(...new Array<string>(pad).fill(""));
  return m;
}

/** `_make_dummy_batch`: a copy that trains nothing, to even out the ranks. */
function dummyOf(m: MicroBatchWire): MicroBatchWire {
  return {
    ...structuredClone(m),
    advantages: new Array<number>(m.input_ids.length).fill(0),
    loss_mask: new Array<boolean>(m.input_ids.length).fill(false),
    rl_weights: null,
    ce_weights: null,
    ref_kl_weights: null,
  };
}

/**
 * prime-rl's `prepare_batch` for text samples: each sample becomes a sequence (truncated to seq_len), sequences are
 * packed first-fit-decreasing into micro batches of at most seq_len tokens, bins are split until their count is a
 * multiple of the data ranks, padded to `padToMultipleOf`, evened out with zero-loss dummies, and balanced over the
 * ranks (Karmarkar–Karp). Returns one micro-batch list per data rank, all of the same length.
 * @example packSamples(samples.map((s) => toTrainingSample(s, "air")), { seqLen: 4096, dataWorldSize: 2 })
 */
export function packSamples(samples: TrainingSampleWire[], options: PackOptions): MicroBatchWire[][] {
  const ranks = options.dataWorldSize;
  if (!Number.isInteger(ranks) || ranks < 1) throw new RangeError(`dataWorldSize ${ranks}`);
  const prepared = samples.map((s) => prepareSample(s, options.seqLen));
  const group = packBins(prepared, options.seqLen, ranks).map((m) =>
    padMicroBatch(m, options.padToMultipleOf ?? 1),
  );
  const missing = (ranks - (group.length % ranks)) % ranks;
  if (missing > 0 && group.length > 0) {
    const dummy = dummyOf(group[0] as MicroBatchWire);
    for (let i = 0; i < missing; i++) group.push(dummy);
  }
  if (group.length === 0) return Array.from({ length: ranks }, () => []);
  const weights = group.map((m) => binCost(m.sequence_lengths));
  return balancedPartition(weights, ranks).map((p) => p.map((i) => group[i] as MicroBatchWire));
}
