import { describe, expect, test } from "bun:test";
import { commandStep } from "./command-step.ts";

describe("commandStep", () => {
  test("exit 0: no tool error; non-zero: the exit code; timed out: says so; the exit code in info", () => {
    expect(commandStep("ok", { exitCode: 0, timedOut: false })).toEqual({
      observation: "ok",
      done: false,
      kind: "command",
      toolError: undefined,
      info: { exitCode: 0 },
    });
    expect(commandStep("no", { exitCode: 2, timedOut: false }).toolError).toBe("exit code 2");
    expect(commandStep("", { exitCode: 137, timedOut: true }).toolError).toBe("timed out");
  });
});
