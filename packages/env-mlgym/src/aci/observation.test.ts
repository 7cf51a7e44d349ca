import { describe, expect, test } from "bun:test";
import { cleanOutput, NO_OUTPUT, observation, truncateOutput } from "./observation.ts";

const state = { step: 3, remaining: 7, openFile: "/w/a.py", cwd: "/w" };

describe("observation", () => {
  test("follows MLGym's template: output, step counter, open file, directory", () => {
    expect(observation("hello\n", state)).toBe(
      "hello\n(Current Step: 3, Remaining Steps: 7)\n(Open file: /w/a.py)\n(Current directory: /w)\nbash-$",
    );
  });

  test("empty output gets the no-output line", () => {
    expect(observation("  \n", { ...state, openFile: undefined })).toStartWith(`${NO_OUTPUT}\n`);
    expect(observation("", { ...state, openFile: undefined })).toContain("(Open file: n/a)");
  });

  test("long output is cut to the limit with a marker naming the sizes", () => {
    const long = Array.from({ length: 5000 }, (_, i) => `row ${i}`).join("\n");
    const cut = truncateOutput(long, 1000);
    expect(cut.length).toBeLessThan(1300);
    expect(cut).toStartWith("row 0\n");
    expect(cut).toEndWith("row 4999");
    expect(cut).toContain(`characters cut`);
    expect(cut).toContain(`of ${long.length} characters`);
    expect(truncateOutput("short", 1000)).toBe("short");
  });
});

describe("cleanOutput", () => {
  test("drops empty lines and progress bars as MLGym does, keeps lines of blanks", () => {
    expect(cleanOutput("a\n\n\nb\r\n  \nc\n")).toBe("a\nb\n  \nc");
    expect(cleanOutput(" 50%|#####     | 5/10 [00:01<00:01, 4.2it/s]\ndone\n")).toBe("done");
    expect(cleanOutput("one\rtwo\fthree")).toBe("one\ntwo\nthree");
  });

  test("observations are cleaned and never cut unless a limit is given", () => {
    const long = Array.from({ length: 3000 }, (_, i) => `${i}`).join("\n\n");
    const body = observation(long, state).split("\n(Current Step:")[0] ?? "";
    expect(body.split("\n")).toHaveLength(3000);
    expect(observation(long, state, 1000).length).toBeLessThan(1500);
    expect(observation("\n\n", state)).toStartWith(`${NO_OUTPUT}\n`);
  });
});
