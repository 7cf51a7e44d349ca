import { describe, expect, test } from "bun:test";
import { constrainLine, focusLine, renderView, shownRange } from "./window.ts";

const file = (n: number) => Array.from({ length: n }, (_, i) => `l${i + 1}`);

describe("viewer window (MLGym's arithmetic)", () => {
  test("a file shorter than the window shows whole, with no counts", () => {
    const line = constrainLine(500, 30, 1000);
    expect(line).toBe(500);
    expect(renderView("/w/a.txt", file(3), line, 1000)).toBe(
      "[File: /w/a.txt (3 lines total)]\n1:l1\n2:l2\n3:l3",
    );
  });

  test("open at line 135 of 300 with window 100: the line sits a sixth down the window", () => {
    const line = constrainLine(focusLine(135, 100), 300, 100);
    expect(line).toBe(169);
    expect(shownRange(line, 300, 100)).toEqual([120, 219]);
    const view = renderView("/w/a.txt", file(300), line, 100).split("\n");
    expect(view[1]).toBe("(119 more lines above)");
    expect(view[2]).toBe("120:l120");
    expect(view.at(-1)).toBe("(81 more lines below)");
  });

  test("the current line stays where a full window fits", () => {
    expect(constrainLine(2999, 3000, 1000)).toBe(2500);
    expect(constrainLine(-5, 3000, 1000)).toBe(500);
    expect(shownRange(2500, 3000, 1000)).toEqual([2001, 3000]);
  });

  test("odd windows keep MLGym's half lines: lines below are rounded, lines above floored", () => {
    const view = renderView("/w/a.txt", file(20), 7, 5).split("\n");
    expect(view).toEqual([
      "[File: /w/a.txt (20 lines total)]",
      "(4 more lines above)",
      "5:l5",
      "6:l6",
      "7:l7",
      "8:l8",
      "9:l9",
      "(11 more lines below)",
    ]);
  });

  test("an empty file shows only its header", () => {
    expect(renderView("/w/e.txt", [], constrainLine(500, 0, 1000), 1000)).toBe(
      "[File: /w/e.txt (0 lines total)]",
    );
  });
});
