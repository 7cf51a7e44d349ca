import { randomBytes } from "node:crypto";

/** What a shell line asked for by calling `validate` or `submit` inside it. */
export type EvaluationCall = "validate" | "submit";

/**
 * The agent shell's conventions, set before each shell command: `ls` is `ls -F` (and `ll`, `la`, `l` as MLGym's aliases file has them), and
 * `validate` / `submit` are shell functions that print a private marker, so that `python train.py && validate`
 * works as in MLGym: the environment sees the marker and runs the evaluation.
 * @example const setup = new ShellSetup(); await sandbox.exec(setup.script, 30_000);
 * setup.evaluationCall(result.output) // "validate" when the line called validate
 */
export class ShellSetup {
  private readonly nonce = randomBytes(6).toString("hex");

  private marker(call: EvaluationCall): string {
    return `AIR_${call.toUpperCase()}_${this.nonce}`;
  }

  /** Bash that defines the alias and the two functions (idempotent; a restarted shell needs it again). */
  get script(): string {
    return [
      "shopt -s expand_aliases",
      "alias ll='ls -alF' la='ls -A' l='ls -CF' ls='ls -F'",
      `validate() { echo ${this.marker("validate")}; }`,
      `submit() { echo ${this.marker("submit")}; }`,
    ].join("\n");
  }

  /** The evaluation a command's output asks for (validate wins when both appear, as in MLGym). */
  evaluationCall(output: string): EvaluationCall | undefined {
    if (output.includes(this.marker("validate"))) return "validate";
    if (output.includes(this.marker("submit"))) return "submit";
    return undefined;
  }
}
