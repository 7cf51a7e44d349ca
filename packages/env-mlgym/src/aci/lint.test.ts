import { describe, expect, test } from "bun:test";
import { newLintErrors, parseLintLine } from "./lint.ts";

describe("newLintErrors", () => {
  test("reports errors the edit introduced as '- <problem>'", () => {
    const after = "/w/a.py:6:15: F821 undefined name 'dta'";
    expect(newLintErrors(after, "", [6, 6], 1)).toBe("- F821 undefined name 'dta'");
  });

  test("ignores old errors above the edit and old errors below it moved by the edit's growth", () => {
    const before = "/w/a.py:3:7: F821 undefined name 'a'\n/w/a.py:5:7: F821 undefined name 'b'";
    const after = "/w/a.py:3:7: F821 undefined name 'a'\n/w/a.py:7:7: F821 undefined name 'b'";
    // lines 4..4 replaced by 3 lines: line 5 moves to 7
    expect(newLintErrors(after, before, [4, 4], 3)).toBe("");
    // the same error at a line the shift does not explain is new
    expect(newLintErrors(after, before, [4, 4], 1)).toBe("- F821 undefined name 'b'");
  });

  test("old errors inside the edited lines are never ignored", () => {
    const same = "/w/a.py:4:7: F821 undefined name 'x'";
    expect(newLintErrors(same, same, [4, 4], 1)).toBe("- F821 undefined name 'x'");
  });

  test("parses flake8 lines with and without a column, skips other text", () => {
    expect(parseLintLine("/w/a.py:2:4: E111 indentation is not a multiple of 4")).toEqual({
      file: "/w/a.py",
      line: 2,
      col: 4,
      problem: "E111 indentation is not a multiple of 4",
    });
    expect(parseLintLine("/w/a.py:2: E902 TokenizeError")?.col).toBe(0);
    expect(parseLintLine("bash: flake8: command not found")).toBeUndefined();
  });
});
