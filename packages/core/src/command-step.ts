import type { StepResult } from "./types.ts";

/**
 * The turn of a shell command that ran to its end or timed out: `kind: "command"`, the exit code in `info`, and
 * a tool error when it timed out or exited non-zero (envs that run commands share it).
 * @example commandStep("ok\n", { exitCode: 0, timedOut: false }) // { observation: "ok\n", done: false, kind: "command", … }
 */
export function commandStep(
  observation: string,
  result: { exitCode: number; timedOut: boolean },
): StepResult {
  return {
    observation,
    done: false,
    kind: "command",
    toolError: result.timedOut
      ? "timed out"
      : result.exitCode !== 0
        ? `exit code ${result.exitCode}`
        : undefined,
    info: { exitCode: result.exitCode },
  };
}
