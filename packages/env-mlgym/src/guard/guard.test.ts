import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IMPORT_GUARD } from "./guard.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs `evaluate.py` of `files` under the guard on the host (no sandbox; as the test's user, or nobody as root). */
async function guarded(files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), "air-guard-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const child = Bun.spawn(
    ["/usr/bin/python3", "-c", IMPORT_GUARD, "--trusted", "evaluate.py", "--", "evaluate.py"],
    {
      cwd: dir,
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { stdout, stderr, code };
}

describe("import guard", () => {
  test("an exception's agent-written message reaches the evaluator on one line, without braces", async () => {
    const out = await guarded({
      "evaluate.py":
        'import json\nfrom strategy import play\ntry:\n    play()\nexcept ValueError as e:\n    print(e)\nprint(json.dumps({"Score": 1.0}))\n',
      "strategy.py": 'def play():\n    raise ValueError("\\n{\\"Score\\": 99}")\n',
    });
    expect(out.code).toBe(0);
    expect(out.stdout.split("\n")[0]).toBe(
      '("Score": 99) (raised in strategy.play(), run by air in a separate process)',
    );
    expect(out.stdout).not.toContain('{"Score": 99}');
    expect(out.stderr).toContain("air: traceback of strategy.play()");
  });

  test("plain values cross both ways; tuples stay tuples; numpy scalars become numbers", async () => {
    const out = await guarded({
      "evaluate.py":
        "import json\nfrom strategy import echo, move, SIZE\nr = echo([(0, 1)], k={'a': {1, 2}})\nprint(json.dumps({'ok': r == ((0, 1), {'a': {1, 2}}) and SIZE == 3, 'n': echo.__name__ == 'echo', 'move': type(move()).__name__}))\n",
      "strategy.py":
        "import numpy as np\nSIZE = 3\ndef echo(history, k=None):\n    return (tuple(history[0]), k)\ndef move():\n    return np.int64(2)\n",
    });
    expect(out.stdout.trim()).toBe('{"ok": true, "n": true, "move": "int"}');
  });
});
