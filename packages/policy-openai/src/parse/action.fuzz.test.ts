import { describe, expect, test } from "bun:test";
import type { Action } from "@air/core";
import { seededRandom } from "@air/core/testing";
import { parseAction } from "./action.ts";
import { stripThink } from "./think.ts";

const TOKENS = [
  "```",
  "```bash",
  "```python",
  "``",
  "`",
  "\n",
  "\n",
  "\n",
  "\r\n",
  "\r",
  " ",
  "  ",
  "\t",
  "<think>",
  "</think>",
  "<think",
  "think>",
  "DISCUSSION",
  "edit 1:3",
  "edit",
  "end_of_edit",
  "insert 4",
  "end_of_insert",
  "<<",
  "<<-",
  "<<<",
  "'EOF'",
  '"EOF"',
  "EOF",
  "END",
  "'",
  '"',
  "\\",
  "$(",
  "$((",
  ")",
  "(",
  "{",
  "}",
  "if",
  "then",
  "fi",
  "for",
  "do",
  "done",
  "case",
  "esac",
  ";;",
  ";",
  "&&",
  "||",
  "|",
  "&",
  "#",
  ">",
  "2>&1",
  "ls",
  "cat",
  "python -c",
  "submit",
  "validate",
  "é",
  "🙂",
  "\u0000",
  "\u2028",
  "x",
  "abc",
  "42",
];

function randomReply(next: () => number): string {
  const length = Math.floor(next() ** 2 * 120);
  let out = "";
  for (let i = 0; i < length; i++) {
    out +=
      next() < 0.85
        ? TOKENS[Math.floor(next() * TOKENS.length)]
        : String.fromCharCode(Math.floor(next() * 0x3000));
  }
  return out;
}

const SEEDS = [
  "DISCUSSION\nLook.\n```\nls -a\n```",
  "```\nedit 1:2\nx = 1\nend_of_edit\n```",
  "<think>hmm</think>```\ncat << 'EOF' > f\nhi\nEOF\n```",
  "```\nfor i in 1 2; do\n echo $i\ndone\nls\n```",
  "```\npython -c \"\nprint('x')\n\"\n```",
];

/** A valid reply cut, duplicated and spliced at random places. */
function mutate(next: () => number): string {
  let s = SEEDS[Math.floor(next() * SEEDS.length)]!;
  const edits = 1 + Math.floor(next() * 4);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(next() * (s.length + 1));
    const len = Math.floor(next() * 12);
    const kind = next();
    if (kind < 0.33) s = s.slice(0, at) + s.slice(at + len);
    else if (kind < 0.66) s = s.slice(0, at) + TOKENS[Math.floor(next() * TOKENS.length)] + s.slice(at);
    else s = s.slice(0, at) + s.slice(at, at + len) + s.slice(at);
  }
  return s;
}

function checkInvariants(input: string, action: Action): void {
  expect(action.text).toBe(input);
  expect((action.command === undefined) !== (action.parseError === undefined)).toBe(true);
  const visible = stripThink(input.replace(/\r\n?/g, "\n")).text;
  if (action.command !== undefined) {
    expect(action.command.length).toBeGreaterThan(0);
    expect(action.command).toBe(action.command.trim());
    expect(visible.includes(action.command)).toBe(true);
    expect(action.command.includes("<think>") || action.command.includes("</think>")).toBe(false);
  } else {
    expect(action.parseError?.length).toBeGreaterThan(0);
  }
  if (action.notes !== undefined) {
    expect(action.notes.length).toBeGreaterThan(0);
    for (const note of action.notes) expect(note.length).toBeGreaterThan(0);
  }
  expect(parseAction(input)).toEqual(action);
}

function check(input: string, seed: number, index: number): void {
  let action: Action;
  try {
    action = parseAction(input);
  } catch (error) {
    throw new Error(`parseAction threw on case ${index} (seed ${seed}): ${JSON.stringify(input)}: ${error}`);
  }
  try {
    checkInvariants(input, action);
  } catch (error) {
    throw new Error(`invariant broken on case ${index} (seed ${seed}): ${JSON.stringify(input)}\n${error}`);
  }
}

const WORDS = [
  "ls",
  "-la",
  "python",
  "train.py",
  "--lr",
  "0.1",
  "data/",
  "&&",
  "|",
  "wc",
  "'a b'",
  '"c d"',
  "2>&1",
];
const PROSE = ["I will", "look at", "the data", "first.", "Then", "validate", "it's fine", "edit later"];

/** One well-formed command: a one-liner, an edit block, a heredoc or a multi-line python -c. */
function wellFormedCommand(next: () => number): string {
  const pick = (list: string[]) => list[Math.floor(next() * list.length)]!;
  const line = () => `${Array.from({ length: 1 + Math.floor(next() * 5) }, () => pick(WORDS)).join(" ")} end`;
  const body = () =>
    Array.from(
      { length: Math.floor(next() * 4) },
      () => `${"  ".repeat(Math.floor(next() * 3))}${pick(PROSE)}`,
    );
  const kind = Math.floor(next() * 4);
  if (kind === 0) return `ls ${line()}`;
  if (kind === 1)
    return [
      `edit ${1 + Math.floor(next() * 9)}:${10 + Math.floor(next() * 9)}`,
      ...body(),
      "end_of_edit",
    ].join("\n");
  if (kind === 2)
    return ["cat << 'EOF' > notes.txt", ...body(), "```python", "x = 1", "```", "EOF"].join("\n");
  return ['python -c "', ...body().map((b) => b.replaceAll("'", "")), 'print(1)"'].join("\n");
}

describe("parseAction fuzz", () => {
  const SEED = 20_261_121;

  test("6,000 random strings of adversarial tokens", () => {
    const next = seededRandom(SEED);
    for (let i = 0; i < 6000; i++) check(randomReply(next), SEED, i);
  });

  test("4,000 mutated well-formed replies", () => {
    const next = seededRandom(SEED + 1);
    for (let i = 0; i < 4000; i++) check(mutate(next), SEED + 1, i);
  });

  test("2,000 generated replies round-trip to their command", () => {
    const next = seededRandom(SEED + 2);
    for (let i = 0; i < 2000; i++) {
      const command = wellFormedCommand(next);
      const prose = Array.from(
        { length: Math.floor(next() * 3) },
        () => PROSE[Math.floor(next() * PROSE.length)],
      );
      const think = next() < 0.3 ? "<think>maybe ```\nrm -rf /\n``` no</think>\n" : "";
      const reply = `${think}DISCUSSION\n${prose.join(" ")}\n\n\`\`\`\n${command}\n\`\`\`\n`;
      const action = parseAction(reply);
      if (action.command !== command || action.notes !== undefined) {
        throw new Error(`case ${i}: ${JSON.stringify(reply)} → ${JSON.stringify(action)}`);
      }
    }
  });

  test("very long and degenerate inputs", () => {
    const inputs = [
      "`".repeat(200_000),
      "```\n".repeat(50_000),
      "<think>".repeat(20_000),
      "</think>".repeat(20_000),
      `\`\`\`\n${"'\"".repeat(50_000)}\n\`\`\``,
      `\`\`\`\ncat <<EOF\n${"x\n".repeat(50_000)}\`\`\``,
      `\`\`\`\n${"$(".repeat(30_000)}\n\`\`\``,
      `\`\`\`\n${"ls\n".repeat(30_000)}\`\`\``,
    ];
    for (const [i, input] of inputs.entries()) check(input, 0, i);
  });
});
