import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BashSandbox } from "./bash-sandbox.ts";
import { Editor } from "./editor.ts";
import { lintFile } from "./lint.ts";

let dir: string;
let sandbox: BashSandbox;
const fresh = () => new Editor(sandbox, { window: 1000, python: "python3", maxOpenChars: 20_000 });
const read = (name: string) => readFileSync(join(dir, name), "utf8");

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "air-editor-"));
  sandbox = await BashSandbox.start(dir);
});
afterAll(async () => {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("Editor (MLGym semantics)", () => {
  test("create writes one newline, so create + edit 1:1 works; create of an existing file opens it", async () => {
    const e = fresh();
    expect(await e.create(["c.py"])).toBe(`[File: ${dir}/c.py (1 lines total)]\n1:`);
    expect(read("c.py")).toBe("\n");
    expect(await e.edit(["1:1"], ["import os", "print(os.sep)"])).toContain("File updated.");
    expect(read("c.py")).toBe("import os\nprint(os.sep)\n");
    const again = await e.create(["c.py"]);
    expect(again).toStartWith(`Error: File 'c.py' already exists.\n[File: ${dir}/c.py (2 lines total)]`);
  });

  test("an edit adding an undefined name is reverted with MLGym's message; old errors do not block", async () => {
    writeFileSync(join(dir, "u.py"), "import os\n\nprint(old_name)\n");
    const e = fresh();
    await e.open(["u.py"]);
    const bad = await e.edit(["1:1"], ["import os", "print(new_name)"]);
    expect(bad).toStartWith("Your proposed edit has introduced new syntax error(s).");
    expect(bad).toContain("ERRORS:\n- F821 undefined name 'new_name'\n");
    expect(bad).not.toContain("old_name'");
    expect(bad).toEndWith(
      "You either need to 1) Specify the correct start/end line arguments or 2) Correct your edit code.\nDO NOT re-run the same failed edit command. Running it again will lead to the same error.",
    );
    expect(read("u.py")).toBe("import os\n\nprint(old_name)\n");
    expect(await e.edit(["1:1"], ["import sys", "print(sys.argv)"])).toContain("File updated.");
  });

  test("bad indentation (E111) is reverted; non-Python files are never linted", async () => {
    writeFileSync(join(dir, "i.py"), "def f():\n    return 1\n");
    writeFileSync(join(dir, "n.md"), "x\n");
    const e = fresh();
    await e.open(["i.py"]);
    expect(await e.edit(["2:2"], ["   return 2"])).toContain("- E111 indentation is not a multiple of 4");
    await e.open(["n.md"]);
    expect(await e.edit(["1:1"], ["undefined(", "   x"])).toContain("File updated.");
  });

  test("out-of-range edits and inserts append; edit 1:1 on an empty file works", async () => {
    writeFileSync(join(dir, "r.txt"), "a\nb\n");
    writeFileSync(join(dir, "empty.txt"), "");
    const e = fresh();
    await e.open(["r.txt"]);
    await e.edit(["7:9"], ["c"]);
    await e.insert(["50"], ["d"]);
    expect(read("r.txt")).toBe("a\nb\nc\nd\n");
    await e.open(["empty.txt"]);
    expect(await e.edit(["1:1"], ["hello"])).toContain("1:hello");
    expect(read("empty.txt")).toBe("hello\n");
  });

  test("after an edit the window is centred on the edited line", async () => {
    writeFileSync(join(dir, "big.txt"), Array.from({ length: 3000 }, (_, i) => `l${i + 1}\n`).join(""));
    const e = fresh();
    await e.open(["big.txt"]);
    const view = (await e.edit(["2000:2000"], ["changed"])).split("\n");
    expect(view[1]).toBe("(1499 more lines above)");
    expect(view[2]).toBe("1500:l1500");
    expect(e.state.line).toBe(1999);
  });

  test("a read-only file is refused with MLGym's message and left as it was", async () => {
    writeFileSync(join(dir, "ro.py"), "x = 1\n", { mode: 0o444 });
    // root may write any file: as root, the editor works through a shell of user nobody
    const root = process.getuid?.() === 0;
    if (root) chmodSync(dir, 0o777);
    const shell = root ? await BashSandbox.start(dir, dir, 65534) : sandbox;
    try {
      const e = new Editor(shell, { window: 1000, python: "python3", maxOpenChars: 20_000 });
      await e.open(["ro.py"]);
      expect(await e.edit(["1:1"], ["x = 2"])).toBe(`Error: You cannot edit read-only file ${dir}/ro.py`);
      expect(read("ro.py")).toBe("x = 1\n");
    } finally {
      if (root) await shell.close();
    }
  });

  test("the third scroll in a row warns; any other command resets the count", async () => {
    writeFileSync(join(dir, "s.txt"), Array.from({ length: 5000 }, (_, i) => `l${i + 1}\n`).join(""));
    const e = fresh();
    await e.open(["s.txt"]);
    e.state.lastAction = "open s.txt";
    for (const expectWarning of [false, false, true]) {
      const out = await e.scroll(1);
      expect(out.includes("WARNING: Scrolling many times")).toBe(expectWarning);
      e.state.lastAction = "scroll_down";
    }
    e.state.lastAction = "ls";
    expect(await e.scroll(-1)).not.toContain("WARNING");
  });

  test("without flake8 in the sandbox, Python's compile() stands in (E999 only)", async () => {
    writeFileSync(join(dir, "s.py"), "def f(:\n");
    const bare = await BashSandbox.start(dir);
    try {
      await bare.exec("PATH=/nonexistent", 5000);
      expect(await lintFile(bare, "/usr/bin/python3", join(dir, "s.py"))).toMatch(
        /^\S+s\.py:1:\d+: E999 SyntaxError: /,
      );
    } finally {
      await bare.close();
    }
  });
});
