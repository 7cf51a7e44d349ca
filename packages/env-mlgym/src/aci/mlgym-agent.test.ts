import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commandDocs, dedent, isMlgymCheckout, loadMlgymAgent, parseToolCommands } from "./mlgym-agent.ts";
import { pyDict, pyNumber } from "./mlgym-prompts.ts";
import { pyFormat } from "./py-format.ts";

/** A made-up MLGym-format checkout: an agent config and one tool file (air's own test files). */
const root = join(import.meta.dir, "../../fixtures/fake-mlgym");
const TOOL_FILE = readFileSync(join(root, "tools", "hello.sh"), "utf8");

describe("MLGym agent config, read at run time", () => {
  test("recognises a checkout and reads templates, env variables (as Python prints them) and tool files", async () => {
    expect(isMlgymCheckout(root)).toBe(true);
    expect(isMlgymCheckout(tmpdir())).toBe(false);
    const agent = await loadMlgymAgent(root);
    expect(agent.envVariables).toEqual({ WINDOW: "100", WHO: "air", EMPTY: "" });
    expect(agent.files.map((f) => [f.name, f.kind])).toEqual([
      ["hello.sh", "source"],
      ["_split", "script"],
    ]);
    expect(agent.commands.map((c) => c.name)).toEqual(["hello", "note", "validate"]);
    expect(agent.nextStepNoOutputTemplate).toBe(agent.nextStepTemplate);
    expect(agent.formatErrorTemplate).toBe("Bad reply.\n  Indented line.\n\nTry again.\n");
  });

  test("command docs list docstring (formatted), signature and arguments per command", () => {
    const docs = commandDocs(parseToolCommands(TOOL_FILE).slice(1, 3), { WHO: "air", WINDOW: "100" });
    expect(docs).toBe(
      "hello:\n  docstring: greets air in a window of 100\n  signature: hello <name>\n  arguments:\n    - name (string) [required]: who to greet\n\n" +
        "note:\n  docstring: writes text\n  signature: note <line>\n<text>\nend_of_note\n\n",
    );
    expect(parseToolCommands(TOOL_FILE)[2]?.endName).toBe("end_of_note");
  });

  test("dedent removes the shared indentation as textwrap.dedent does", () => {
    expect(dedent("    a\n      b\n\n    c\n")).toBe("a\n  b\n\nc\n");
    expect(dedent("  a\n b")).toBe(" a\nb");
  });

  test("pyFormat fills named fields and braces as Python does, and refuses unknown fields", () => {
    expect(pyFormat("{a}-{{b}}", { a: 1 })).toBe("1-{b}");
    expect(() => pyFormat("{missing}", {})).toThrow("missing");
  });

  test("numbers and dicts print as Python's repr", () => {
    expect(pyNumber(1, true)).toBe("1.0");
    expect(pyNumber(0.00001, true)).toBe("1e-05");
    expect(pyNumber(30340.1)).toBe("30340.1");
    expect(pyNumber(1e16, true)).toBe("1e+16");
    expect(pyDict({ Score: 1.02267, rmse: 2 })).toBe("{'Score': 1.02267, 'rmse': 2.0}");
  });
});
