import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalRuntime } from "@air/sandbox";
import { BashSandbox } from "./bash-sandbox.ts";
import type { MlgymAgent } from "./mlgym-agent.ts";
import { commandDocs, parseToolCommands } from "./mlgym-agent.ts";
import { guardMultiline, MlgymToolsShell } from "./mlgym-shell.ts";

const TOOLS = [
  "hello() {",
  '    echo "hello $1 from $WHO"',
  "}",
  "# @yaml",
  "# docstring: writes text",
  "# end_name: end_of_note",
  "note() {",
  "    cat > note.txt",
  "}",
  "validate() {",
  '    echo "<<VALIDATION||"; echo x; echo "||VALIDATION>>"',
  "}",
].join("\n");

function agent(): MlgymAgent {
  const commands = parseToolCommands(TOOLS);
  return {
    file: "test.yaml",
    systemTemplate: "",
    taskTemplate: "",
    nextStepTemplate: "{observation}",
    nextStepNoOutputTemplate: "none",
    stateCommand: {
      name: "state",
      code: `state() { echo '{"open_file": "'"\${CURRENT_FILE:-n/a}"'", "working_dir": "'$PWD'"}'; };`,
    },
    envVariables: { WHO: "air", CURRENT_FILE: "" },
    files: [{ name: "tools.sh", contents: TOOLS, kind: "source" }],
    commands,
    commandDocs: commandDocs(commands, {}),
    demonstrations: [],
    outputParser: "MLGymThoughtActionParser",
  };
}

let dir: string;
let sandbox: BashSandbox;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "air-mlgym-shell-"));
  sandbox = await BashSandbox.start(dir);
});
afterAll(async () => {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("guardMultiline (MLGym's heredoc guard)", () => {
  test("turns a terminated body into a heredoc, leaves other commands alone", () => {
    const endings = { edit: "end_of_edit" };
    expect(guardMultiline("edit 1:1\n  x\nend_of_edit", endings)).toBe(
      "edit 1:1 << 'end_of_edit'\n  x\nend_of_edit",
    );
    expect(guardMultiline("ls -l", endings)).toBe("ls -l");
    expect(guardMultiline("edit 1:1\nx", endings)).toBe("edit 1:1\nx");
    expect(guardMultiline("submit", endings)).toBe("submit");
  });
});

describe("MlgymToolsShell", () => {
  test("sources the tools with their env variables; bodies reach the tool on stdin; markers ask for evaluation", async () => {
    const shell = new MlgymToolsShell(sandbox, agent());
    expect((await shell.run("hello you", 5000)).output).toBe("hello you from air");
    await shell.run("note\n  first\n\nthird\nend_of_note", 5000);
    expect(readFileSync(join(dir, "note.txt"), "utf8")).toBe("  first\n\nthird\n");
    expect((await shell.run("true && validate", 5000)).evaluation).toBe("validate");
    expect((await shell.run("printf 'a\\n\\nb\\n'", 5000)).output).toBe("a\nb");
    expect((await sandbox.exec("echo $LAST_ACTION", 5000)).output).toBe("printf 'a\\n\\nb\\n'\n");
    expect((await shell.run("echo 'unclosed", 5000)).output).toMatch(
      /^\/bin\/bash: line \d+: unexpected EOF/,
    );
    expect(await shell.state()).toEqual({ openFile: "n/a", cwd: dir });
  });

  test("a fresh shell gets the open file and current line back (shell replaced, fork)", async () => {
    const first = new MlgymToolsShell(sandbox, agent());
    await first.run("export CURRENT_FILE=/w/a.py CURRENT_LINE=42", 5000);
    expect(first.carry.line).toBe(42);
    expect((await first.state()).openFile).toBe("/w/a.py");
    const fresh = await BashSandbox.start(dir);
    try {
      const second = new MlgymToolsShell(fresh, agent());
      Object.assign(second.carry, first.carry);
      expect((await second.run('echo "$CURRENT_FILE:$CURRENT_LINE"', 5000)).output).toBe("/w/a.py:42");
    } finally {
      await fresh.close();
    }
  });

  test("bwrap's home is not writable: the tools go to /tmp/mlgym-commands, one directory however often the shell is set up", async () => {
    const root = mkdtempSync(join(tmpdir(), "air-mlgym-shell-bwrap-"));
    const task = join(root, "task");
    mkdirSync(join(task, "workspace"), { recursive: true });
    const runtime = new LocalRuntime({ root: join(root, "sandboxes"), python: "/usr/bin/python3" });
    try {
      const box = await runtime.acquire({ key: "tools", dir: task, readOnly: [] }, { rolloutId: "r1" });
      expect((await box.exec('[ -w "$HOME" ] || echo "home not writable"', 30_000)).output).toBe(
        "home not writable\n",
      );
      // a fresh MlgymToolsShell sets the tools up again, as after a replaced shell or a restore
      for (let i = 0; i < 3; i++)
        expect((await new MlgymToolsShell(box, agent()).run("hello you", 30_000)).output).toBe(
          "hello you from air",
        );
      expect((await box.exec("ls -d /tmp/mlgym-commands*", 30_000)).output).toBe("/tmp/mlgym-commands\n");
      expect((await box.exec('echo "$PATH" | tr : "\\n" | grep -c mlgym-commands', 30_000)).output).toBe(
        "1\n",
      );
      await box.exec("rm -rf /tmp/mlgym-commands && ln -s /tmp/elsewhere /tmp/mlgym-commands", 30_000);
      expect((await new MlgymToolsShell(box, agent()).run("hello link", 30_000)).output).toBe(
        "hello link from air",
      );
      expect((await box.exec("ls -d /tmp/mlgym-commands.*", 30_000)).output).toMatch(
        /^\/tmp\/mlgym-commands\.\w{6}\n$/,
      );
      await runtime.release(box);
    } finally {
      await runtime.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
