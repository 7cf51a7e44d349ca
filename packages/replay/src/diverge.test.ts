import { expect, test } from "bun:test";
import { firstDivergence, spread } from "./diverge.ts";

test("firstDivergence: the first differing turn and line, missing and extra turns, none when equal", () => {
  expect(firstDivergence(["a", "x\ny\nz"], ["a", "x\ny\nz"])).toBeNull();
  expect(firstDivergence(["a", "x\ny\nz"], ["a", "x\nY\nz"])).toEqual({
    turn: 1,
    line: 2,
    stored: "y",
    replayed: "Y",
  });
  expect(firstDivergence(["a\nb"], ["a"])).toEqual({ turn: 0, line: 2, stored: "b", replayed: "(end)" });
  expect(firstDivergence(["a", "b"], ["a"])).toEqual({
    turn: 1,
    line: 1,
    stored: "b",
    replayed: "(no turn)",
  });
  expect(firstDivergence(["a"], ["a", "c"])).toEqual({
    turn: 1,
    line: 1,
    stored: "(no turn)",
    replayed: "c",
  });
  expect(firstDivergence(["x".repeat(500)], ["y"])?.stored).toHaveLength(201);
});

test("spread: population std over the scored values only", () => {
  expect(spread([1, 3, null])).toEqual({ n: 2, mean: 2, std: 1, min: 1, max: 3 });
  expect(spread([null])).toEqual({ n: 0, mean: null, std: null, min: null, max: null });
});
