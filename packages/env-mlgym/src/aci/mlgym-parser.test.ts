import { expect, test } from "bun:test";
import { join } from "node:path";
import { MLGYM_PARSERS, parseMlgymReply } from "./mlgym-parser.ts";

// replies.json is the project's own; expected.json was written by MLGym's own parsers (make-expected.py, run by
// hand with an MLGym checkout at 9d40c1b): air must read every reply exactly as MLGym does.
const dir = join(import.meta.dir, "../../fixtures/mlgym-parser");
const replies = (await Bun.file(join(dir, "replies.json")).json()) as string[];
const expected = (await Bun.file(join(dir, "expected.json")).json()) as Record<
  string,
  Array<{ command?: string; parseError?: string }>
>;

for (const parser of MLGYM_PARSERS) {
  test(`${parser}: every reply read as MLGym's own parser reads it`, () => {
    expect(expected[parser]).toHaveLength(replies.length);
    const got: Array<{ command?: string; parseError?: string }> = replies.map((reply) => {
      const action = parseMlgymReply(reply, parser);
      return action.parseError === undefined
        ? { command: action.command }
        : { parseError: action.parseError };
    });
    expect(got).toEqual(expected[parser] ?? []);
  });
}
