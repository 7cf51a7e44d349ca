import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadMlgymAgent } from "../aci/mlgym-agent.ts";
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

test('env.aci = "mlgym": the session runs the checkout\'s own tools and fills its templates', async () => {
  const agent = await loadMlgymAgent(join(import.meta.dir, "../../fixtures/fake-mlgym"));
  const outcome = await runAirSequence(
    {
      name: "fake",
      about: "",
      files: {},
      steps: ["hello you", "note\n  a\n\nb\nend_of_note", "printf '\\n\\n'", "ls && validate"],
    },
    agent,
  );
  expect(outcome.steps.map((s) => s.kind)).toEqual(["command", "command", "command", "validate"]);
  expect(outcome.steps[0]).toEqual({
    kind: "command",
    output: "hello you from air",
    openFile: "n/a",
    cwd: "/WS",
  });
  expect(outcome.files).toEqual({ "note.txt": "  a\n\nb\n" });
});

// MLGYM_ROOT=<checkout> bun test packages/env-mlgym/parity: the same sequences with that checkout's own tools
test.skipIf(!process.env.MLGYM_ROOT)(
  'parity with env.aci = "mlgym" on MLGYM_ROOT',
  async () => {
    const agent = await loadMlgymAgent(process.env.MLGYM_ROOT as string);
    for (const sequence of loadSequences()) {
      const outcome = await runAirSequence(sequence, agent);
      expect(
        `${sequence.name}\n${describeDifference(expected[sequence.name] as SequenceOutcome, outcome)}`,
      ).toBe(`${sequence.name}\n`);
    }
  },
  300_000,
);
