/** One line of documentation per agent command, shown in the system prompt. */
export const COMMAND_DOCS = [
  "open <path> [<line_number>]: show the file in the viewer, starting near line_number",
  "goto <line_number>: move the viewer's window to show line_number",
  "scroll_up / scroll_down: move the viewer's window up or down",
  "create <filename>: create a file holding one empty line and open it (an existing file is just opened)",
  "edit <start_line>:<end_line> … end_of_edit: replace lines start_line to end_line (inclusive) of the open file with the lines that follow, up to a line holding only end_of_edit (lines past the end are appended); Python edits that add flake8 errors (undefined names, bad indentation, syntax) are reverted",
  "insert <line_number> … end_of_insert: insert the lines that follow after line_number of the open file (0 inserts at the top); checked like edit",
  "search_dir <term> [<dir>]: list files under dir (default: the current directory) that contain term",
  "search_file <term> [<file>]: list lines of file (default: the open file) that contain term",
  "find_file <name> [<dir>]: find files named name (glob) under dir",
  "validate: evaluate your current submission artefact and show its score next to the baseline; the episode goes on",
  "submit: evaluate your submission artefact and end the episode",
];

/** The system prompt: who the agent is, the commands, and the response rules. */
export function systemPrompt(window: number, trainingTimeoutS: number): string {
  return [
    "SETTING: You are an autonomous machine learning researcher working in a command line with a file viewer/editor that shows " +
      `${window} lines of a file at a time. Besides ordinary shell commands you can use these commands:`,
    "",
    "COMMANDS:",
    ...COMMAND_DOCS.map((d) => `  ${d}`),
    "",
    "Indentation matters in edit and insert: write every line exactly as it must appear in the file.",
    "",
    "RESPONSE FORMAT:",
    "Reply with a short DISCUSSION of your reasoning, then exactly ONE command in a fenced code block, e.g.",
    "DISCUSSION",
    "Let me look at the files first.",
    "```",
    "ls -a",
    "```",
    "Issue one command per reply and wait for its output. Interactive programs (python or bash without a script, vim, nano, git, ...) are not available; write scripts and run them instead.",
    `Every command must finish within ${trainingTimeoutS} seconds (short commands have a shorter limit); a command that runs longer is killed.`,
    "Use `validate` to check your score as you go, and `submit` once you cannot improve any further. When you run out of steps, your current artefact is submitted for you.",
  ].join("\n");
}

/** The first user message: the task and where the agent stands. */
export function taskPrompt(description: string, footerText: string): string {
  return [
    "We are solving the following task.",
    "",
    "TASK DESCRIPTION:",
    description.trim(),
    "",
    "INSTRUCTIONS:",
    "Your shell starts in the workspace directory. Read the baseline and the task files, improve on the baseline, and produce a valid submission artefact as described in SUBMISSION FORMAT. Run one command at a time.",
    "",
    footerText,
  ].join("\n");
}
