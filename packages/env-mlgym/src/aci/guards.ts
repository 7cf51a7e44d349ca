/** The agent commands the environment implements; a shell line that calls one gets a clear error. */
export const ACI_COMMANDS = [
  "open",
  "goto",
  "scroll_up",
  "scroll_down",
  "create",
  "edit",
  "insert",
  "search_dir",
  "search_file",
  "find_file",
  "validate",
  "submit",
];

/** Shell functions that shadow the agent commands (and programs of the same name, e.g. xdg `open`). */
export const ACI_GUARDS = ACI_COMMANDS.map(
  (name) =>
    `${name}() { echo "${name}: run it as a command on its own, not inside a shell line" >&2; return 2; }`,
).join("\n");
