import type { Sandbox } from "@air/sandbox";
import type { Editor } from "./editor.ts";
import type { parseCommand } from "./parse.ts";
import { findFile, searchDir, searchFile } from "./search.ts";

/** Runs one of air's editor and search commands (`open` … `find_file`) and returns its output; undefined for any other command. */
export async function editorCommand(
  e: Editor,
  sandbox: Sandbox,
  aci: string,
  parsed: ReturnType<typeof parseCommand>,
): Promise<string | undefined> {
  switch (aci) {
    case "open":
      return e.open(parsed.args);
    case "goto":
      return e.goto(parsed.args);
    case "scroll_down":
      return e.scroll(1);
    case "scroll_up":
      return e.scroll(-1);
    case "create":
      return e.create(parsed.args);
    case "edit":
      return e.edit(parsed.args, parsed.body);
    case "insert":
      return e.insert(parsed.args, parsed.body);
    case "search_dir":
      return searchDir(sandbox, parsed.args);
    case "search_file":
      return searchFile(sandbox, parsed.args, e.state.file);
    case "find_file":
      return findFile(sandbox, parsed.args);
  }
  return undefined;
}
