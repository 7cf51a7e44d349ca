/** Where the agent is, for the observation footer. */
export interface PromptState {
  step: number;
  remaining: number;
  openFile?: string;
  cwd: string;
}

/** MLGym's line for a command that printed nothing. */
export const NO_OUTPUT = "Your command ran successfully and did not produce any output.";

/**
 * Cuts `text` to at most `maxChars`, keeping its head and tail around a marker that says how much was cut.
 * @example truncateOutput("x".repeat(100), 40) // "xxxx…[... 60 characters cut ...]…xxxx"-like
 */
export function truncateOutput(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const head = Math.floor(maxChars * 0.7);
  const tail = Math.max(0, maxChars - head);
  const cut = text.length - head - tail;
  return `${text.slice(0, head)}\n\n[... ${cut} of ${text.length} characters cut; the output was too long. Use head, tail, grep or open <file> <line> to see parts of it ...]\n\n${text.slice(text.length - tail)}`;
}

/**
 * The footer MLGym appends to every observation.
 * @example footer({ step: 1, remaining: 9, cwd: "/home/agent/workspace" }) // "(Current Step: 1, Remaining Steps: 9)\n..."
 */
export function footer(state: PromptState): string {
  return [
    `(Current Step: ${state.step}, Remaining Steps: ${state.remaining})`,
    `(Open file: ${state.openFile ?? "n/a"})`,
    `(Current directory: ${state.cwd})`,
    "bash-$",
  ].join("\n");
}

/** A tqdm progress bar line (MLGym drops these from command output). */
const TQDM = /(?:.*?:\s*)?(\d+%\|.*?\|.*\[.*?\])/;
/** Line breaks as Python's str.splitlines() knows them. */
const LINE_BREAKS = new RegExp(
  ["\\r\\n", "[\\n\\r\\v\\f\\u001c\\u001d\\u001e\\u0085\\u2028\\u2029]"].join("|"),
);

/**
 * MLGym's clean-up of every command's output: split into lines (Python's `splitlines`), drop empty lines and
 * tqdm progress bars, join with newlines. Lines holding only blanks are kept.
 * @example cleanOutput("a\n\nb\r\n 50%|##   | 1/2 [00:01<00:01]\n") // "a\nb"
 */
export function cleanOutput(text: string): string {
  return text
    .split(LINE_BREAKS)
    .filter((line) => line !== "" && !TQDM.test(line))
    .join("\n");
}

/**
 * MLGym's next-step observation: the cleaned output (or the no-output line when it is blank), then the footer.
 * `maxChars` (off by default, as in MLGym) cuts longer output, keeping its head and tail.
 * @example observation("", { step: 2, remaining: 8, cwd: "/w" }) // starts with NO_OUTPUT
 */
export function observation(output: string, state: PromptState, maxChars?: number): string {
  const cleaned = cleanOutput(output);
  if (cleaned.trim() === "") return `${NO_OUTPUT}\n${footer(state)}`;
  const body = maxChars === undefined ? cleaned : truncateOutput(cleaned, maxChars);
  return `${body}\n${footer(state)}`;
}
