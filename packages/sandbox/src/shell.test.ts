import { afterAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { SentinelShell, shellQuote } from "./shell.ts";

const child = spawn("bash", ["--noprofile", "--norc"], { stdio: ["pipe", "pipe", "pipe"] });
const shell = new SentinelShell((text) => child.stdin.write(text));
child.stdout.on("data", (c: Buffer) => shell.feed(c));
child.stdin.write(SentinelShell.PRELUDE);
afterAll(() => {
  child.kill("SIGKILL");
});

describe("SentinelShell", () => {
  test("returns output, exit code and working directory; state persists", async () => {
    const a = await shell.run("cd /tmp && echo hi; echo err >&2");
    expect(a).toEqual({ output: "hi\nerr\n", exitCode: 0, cwd: "/tmp" });
    const b = await shell.run("pwd; false");
    expect(b).toEqual({ output: "/tmp\n", exitCode: 1, cwd: "/tmp" });
  });

  test("output without a final newline and heredocs survive", async () => {
    expect((await shell.run("printf abc")).output).toBe("abc");
    expect((await shell.run("cat <<'EOF'\nx y\nEOF")).output).toBe("x y\n");
  });

  test("a command cannot read the shell's own input", async () => {
    expect((await shell.run("cat")).output).toBe("");
    expect((await shell.run("echo still here")).output).toBe("still here\n");
  });

  test("concurrent calls run one after another", async () => {
    const results = await Promise.all([1, 2, 3].map((n) => shell.run(`echo ${n}`)));
    expect(results.map((r) => r.output)).toEqual(["1\n", "2\n", "3\n"]);
  });

  test("a flood of output keeps its head and tail within the buffer limit", async () => {
    const small = spawn("bash", ["--noprofile", "--norc"], { stdio: ["pipe", "pipe", "pipe"] });
    try {
      const capped = new SentinelShell((text) => small.stdin.write(text), 4000);
      small.stdout.on("data", (c: Buffer) => capped.feed(c));
      const result = await capped.run("seq 1 100000");
      expect(result.output).toStartWith("1\n2\n3\n");
      expect(result.output).toEndWith("99999\n100000\n");
      expect(result.output).toMatch(/\[\.\.\. \d+ characters dropped \.\.\.\]/);
      expect(result.output.length).toBeLessThan(6000);
      const dropped = Number(/(\d+) characters dropped/.exec(result.output)?.[1]);
      const full = Array.from({ length: 100000 }, (_, i) => `${i + 1}\n`).join("").length;
      expect(
        result.output.length -
          result.output.match(/\n\[\.\.\. \d+ characters dropped \.\.\.\]\n/)![0].length +
          dropped,
      ).toBe(full);
      expect((await capped.run("echo next")).output).toBe("next\n");
    } finally {
      small.kill("SIGKILL");
    }
  });

  test("shellQuote makes one word of anything", async () => {
    const tricky = `it's "$HOME" \`x\` ;|&`;
    expect((await shell.run(`printf '%s' ${shellQuote(tricky)}`)).output).toBe(tricky);
  });
});
