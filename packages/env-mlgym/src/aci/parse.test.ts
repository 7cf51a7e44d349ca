import { describe, expect, test } from "bun:test";
import { blockedName, malformedEdit, parseCommand, splitWords } from "./parse.ts";

describe("parseCommand", () => {
  test("splits name and quoted arguments", () => {
    expect(parseCommand('search_dir "def main" src')).toMatchObject({
      name: "search_dir",
      args: ["def main", "src"],
    });
    expect(splitWords(`open 'my file.py' 3`)).toEqual(["open", "my file.py", "3"]);
  });

  test("takes the edit body up to end_of_edit, keeping indentation", () => {
    const parsed = parseCommand("edit 2:3\n    x = 1\n\n    y = 2\nend_of_edit\n");
    expect(parsed).toMatchObject({ name: "edit", args: ["2:3"], body: ["    x = 1", "", "    y = 2"] });
  });

  test("only an unindented end_of_edit (trailing blanks allowed) ends the body, as in MLGym", () => {
    expect(parseCommand("edit 1:1\n  end_of_edit\nx\nend_of_edit  \n")).toMatchObject({
      body: ["  end_of_edit", "x"],
      terminated: true,
    });
  });

  test("an edit n:m that never says end_of_edit is malformed; other commands are not", () => {
    expect(malformedEdit("edit 1:2\nx = 1")).toBe(true);
    expect(malformedEdit("edit 1:2\nx = 1\nend_of_edit")).toBe(false);
    expect(malformedEdit("edit x\ny")).toBe(false);
    expect(malformedEdit("insert 1\ny")).toBe(false);
  });

  test("accepts an insert body without its terminator", () => {
    expect(parseCommand("insert 0\nimport os").body).toEqual(["import os"]);
  });
});

describe("blockedName", () => {
  test("blocks interactive programs and git, bare interpreters only when alone", () => {
    expect(blockedName("vim train.py")).toBe("vim");
    expect(blockedName("git status")).toBe("git");
    expect(blockedName("python")).toBe("python");
    expect(blockedName("  bash ")).toBe("bash");
    expect(blockedName("python train.py")).toBeUndefined();
    expect(blockedName("bash run.sh")).toBeUndefined();
    expect(blockedName("gitk")).toBeUndefined();
  });
});
