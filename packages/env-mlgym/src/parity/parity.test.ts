import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import {
  describeDifference,
  EXPECTED_FILE,
  loadSequences,
  runAirSequence,
  type SequenceOutcome,
} from "./kit.ts";

const expected = JSON.parse(readFileSync(EXPECTED_FILE, "utf8")) as Record<string, SequenceOutcome>;

test("every sequence has committed expectations", () => {
  expect(loadSequences().map((s) => s.name)).toEqual(Object.keys(expected));
  expect(loadSequences().length).toBeGreaterThanOrEqual(25);
});

for (const sequence of loadSequences()) {
  test(`parity: ${sequence.name}`, async () => {
    const outcome = await runAirSequence(sequence);
    expect(describeDifference(expected[sequence.name] as SequenceOutcome, outcome)).toBe("");
  }, 30_000);
}
