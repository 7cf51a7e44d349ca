import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { decode } from "@msgpack/msgpack";
import { decodeMicroBatches, encodeMicroBatches } from "./micro-batch.ts";
import { packSamples } from "./pack.ts";
import { balancedPartition } from "./partition.ts";
import { encodeTrainingBatch, type TrainingSampleWire } from "./wire.ts";

// Bytes written by prime-rl's own msgspec structs (and, for 0.9, its own packer) at the pinned commits:
// golden/make-golden.sh. These tests compare air's encoder with them byte for byte.
const GOLDEN = join(import.meta.dir, "..", "golden");

interface Case {
  name: string;
  step: number;
  seq_len: number;
  data_world_size: number;
  pad_to_multiple_of: number;
  samples: TrainingSampleWire[];
}
const cases = (JSON.parse(readFileSync(join(GOLDEN, "cases.json"), "utf8")) as { cases: Case[] }).cases;

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

describe("prime-rl 0.8 (v0.8.0): TrainingBatch", () => {
  for (const c of cases) {
    test(`${c.name}: air's bytes are prime-rl's`, () => {
      const want = readFileSync(join(GOLDEN, "v0.8", `${c.name}.bin`));
      const got = encodeTrainingBatch({ examples: c.samples, step: c.step, run_idx: null });
      expect(hex(got)).toBe(hex(want));
    });
  }
  test("prime-rl writes every field, the None run_idx too (omit_defaults does not trim the array layout)", () => {
    const raw = decode(readFileSync(join(GOLDEN, "v0.8", "basic.bin"))) as unknown[];
    expect(raw.length).toBe(3);
    expect(raw[2]).toBeNull();
  });
});

describe("prime-rl 0.9 (MicroBatch per data rank)", () => {
  for (const c of cases) {
    test(`${c.name}: air packs and encodes each rank's file as prime-rl does`, () => {
      const files = readdirSync(join(GOLDEN, "v0.9", c.name)).sort();
      expect(files.length).toBe(c.data_world_size);
      const grid = packSamples(c.samples, {
        seqLen: c.seq_len,
        dataWorldSize: c.data_world_size,
        padToMultipleOf: c.pad_to_multiple_of,
      });
      grid.forEach((rank, r) => {
        const want = readFileSync(join(GOLDEN, "v0.9", c.name, `rank_${r}.bin`));
        expect(hex(encodeMicroBatches(rank))).toBe(hex(want));
      });
    });
    test(`${c.name}: air's decoder reads prime-rl's files`, () => {
      for (let r = 0; r < c.data_world_size; r++) {
        const bytes = readFileSync(join(GOLDEN, "v0.9", c.name, `rank_${r}.bin`));
        const batches = decodeMicroBatches(bytes);
        expect(batches.length).toBeGreaterThan(0);
        for (const m of batches) {
          expect(m.sequence_lengths.reduce((a, b) => a + b, 0)).toBe(m.input_ids.length);
          expect(m.input_ids.length).toBeLessThanOrEqual(c.seq_len);
          expect(m.input_ids.length % c.pad_to_multiple_of).toBe(0);
        }
        expect(hex(encodeMicroBatches(batches))).toBe(hex(bytes));
      }
    });
  }
  test("every trainable token of the fixtures reaches exactly one rank (dummies train nothing)", () => {
    const c = cases.find((x) => x.name === "ranks") as Case;
    const grid = packSamples(c.samples, { seqLen: c.seq_len, dataWorldSize: 2 });
    const trained = grid.flat().reduce((n, m) => n + m.loss_mask.filter(Boolean).length, 0);
    expect(trained).toBe(c.samples.reduce((n, s) => n + s.mask.filter(Boolean).length, 0));
    expect(grid[0]?.length).toBe(grid[1]?.length);
  });
});

test("balancedPartition gives prime-rl's balanced_partition result on 12 random load vectors", () => {
  const cases = JSON.parse(readFileSync(join(GOLDEN, "v0.9", "partition.json"), "utf8")) as [
    number[],
    number,
    number[][],
  ][];
  expect(cases.length).toBe(12);
  for (const [weights, k, want] of cases) expect(balancedPartition(weights, k)).toEqual(want);
});
