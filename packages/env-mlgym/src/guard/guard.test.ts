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

  test("the agent's function sees exactly the evaluator's history at every call, whatever either side does to it", async () => {
    // The evaluator changes its history every way it can between calls; the agent's function returns repr() of
    // what it got (and then mutates it, which must not leak into the next call).
    const out = await guarded({
      "evaluate.py": [
        "import json",
        "from strategy import seen",
        "h, bad, calls = [], [], []",
        "def check(*extra):",
        "    got = seen(h, *extra)",
        "    calls.append(1)",
        "    if got != repr(h): bad.append((got, repr(h)))",
        "for i in range(30):",
        "    check()",
        "    h.append((i % 2, 1 - i % 2))",
        "check(7)",
        "h[3] = (True, 0)       # an equal item of another type, in place",
        "check()",
        "h.pop(); check()",
        "h.append([1, 2]); check()  # a mutable item",
        "h[-1].append(3); check()   # mutated in place",
        "h[-1] = (5, 'x'); check()",
        "h.append((6, None)); check()",
        "h.clear(); check()",
        "h.append((1.5, 2)); check()",
        "print(json.dumps({'bad': bad, 'calls': len(calls)}))",
      ].join("\n"),
      "strategy.py":
        "def seen(history, *extra):\n    r = repr(history)\n    history.append('junk')\n    if history[:1]: history[0] = 'junk'\n    return r\n",
    });
    expect(out.stderr).toBe("");
    expect(JSON.parse(out.stdout)).toEqual({ bad: [], calls: 39 });
  });
});
