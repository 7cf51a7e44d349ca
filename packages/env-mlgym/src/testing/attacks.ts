import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Environment } from "@air/core";
import { REPO_ROOT } from "./context.ts";
import { exampleOf, runScript } from "./script.ts";
import { makeEnv } from "./suite.ts";

/** Names of every evaluation-only file of the project's tasks (none may ever be readable by the agent). */
const SECRET_NAMES = ["answer.csv", "opponents.py"];

/**
 * What an agent tries against the sandbox, in either runtime: absolute host paths, `find /`, symlinks, /proc
 * of other processes, a background process waiting for the evaluation, changing what a later evaluation
 * runs, the network, killing everything it can.
 */
export function attackSuite(
  runtime: "docker" | "local",
  enabled: boolean,
  extra: Record<string, unknown> = {},
): void {
  let env: Environment;
  let runDir = "";
  beforeAll(async () => {
    if (!enabled) return;
    const made = await makeEnv(runtime, `air-test-attacks-${runtime}-${process.pid}`, {
      command_timeout_s: 30,
      ...extra,
    });
    env = made.env;
    runDir = made.ctx.runDir;
  });
  afterAll(async () => {
    await env?.close?.();
  });
  const it = (name: string, fn: () => Promise<void>, timeoutMs = 60_000) =>
    test.skipIf(!enabled)(name, fn, timeoutMs);

  it("absolute host paths, find / and symlinks reach no evaluation-only file", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const hostCopies = [
      `${REPO_ROOT}/data/apartmentRent/answer.csv`,
      `${runDir}/mlgym-tasks/*/evaluation/answer.csv`,
      `${runDir}/sandboxes`,
      `${process.env.HOME ?? "/root"}/.bashrc`,
    ];
    const results = await runScript(env, example, [
      `for p in ${hostCopies.join(" ")}; do ls -d $p 2>/dev/null; cat $p 2>/dev/null; done; echo end`,
      `find / \\( ${SECRET_NAMES.map((n) => `-name ${n}`).join(" -o ")} -o -name 'ground_truth*' \\) 2>/dev/null; echo end`,
      `ln -s ${REPO_ROOT}/data/apartmentRent/answer.csv a.csv; ln -s ../../../../mlgym-tasks leak; cat a.csv leak/*/evaluation/answer.csv 2>&1 | head -3; echo end`,
      "cat /proc/1/cmdline | tr '\\0' ' '; echo end",
    ]);
    expect(results[0]?.observation).toStartWith("end\n");
    expect(results[1]?.observation).toStartWith("end\n");
    expect(results[2]?.observation).toContain("No such file or directory");
    expect(results[2]?.observation).not.toMatch(/^\d+,/m);
    // Nothing of the host's paths shows in the sandbox's first process.
    expect(results[3]?.observation).not.toContain(runDir);
    expect(results[3]?.observation).not.toContain(REPO_ROOT);
  });

  it("a background process waiting for the evaluation sees neither its files nor its processes", async () => {
    const example = await exampleOf(env, "rpsTournament");
    const watcher = [
      "(for i in $(seq 1 2000); do",
      "  grep -a -l -e 'e[v]aluate[.]py' -e 'oppo[n]ents' /proc/[0-9]*/cmdline 2>/dev/null;",
      "  cat /proc/[0-9]*/cwd/oppo*ents.py /proc/[0-9]*/root/home/agent/workspace/oppo*ents.py 2>/dev/null;",
      "done > /tmp/seen.txt 2>&1 &)",
      "(for i in $(seq 1 40); do find / -maxdepth 5 -name 'oppo*ents.py' 2>/dev/null; sleep 0.02; done >> /tmp/seen.txt &)",
    ].join("\n");
    const results = await runScript(env, example, [
      watcher,
      "validate",
      "validate",
      "sleep 0.5; wc -c < /tmp/seen.txt; head -c 300 /tmp/seen.txt",
    ]);
    expect(results[1]?.scores?.Score).toBeCloseTo(example.score?.baseline?.Score as number, 6);
    expect(results[3]?.observation).toStartWith("0\n");
  });

  it("a rollout cannot change what a later evaluation runs, its own or another rollout's", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const fake = `import json; print(json.dumps({"r2": 42.0, "rmse": 0.0}))`;
    const forge = [
      `for f in $(find / -name evaluate.py -writable 2>/dev/null) ../../../../mlgym-tasks/*/evaluation/evaluate.py; do echo '${fake}' > "$f" 2>/dev/null && echo "wrote $f"; done`,
      `(while true; do for f in $(find / -name 'evaluate.py' 2>/dev/null); do echo '${fake}' > "$f" 2>/dev/null; done; sleep 0.05; done &)`,
    ];
    const first = await runScript(env, example, [...forge, "python train.py", "validate"]);
    if (first[3]?.scores === undefined)
      throw new Error(
        `validate gave no score: ${first.map((r, i) => `[${i}] ${r?.observation}`).join("\n")}`,
      );
    expect(first[3]?.scores?.r2).toBeCloseTo(example.score?.baseline?.r2 as number, 6);
    const second = await runScript(env, example, [
      "python train.py",
      "validate",
      "ps -u \"$(id -un)\" -o args= | grep -c -e '^sleep 0' -e '^find /' || true",
    ]);
    expect(second[1]?.scores?.r2).toBeCloseTo(example.score?.baseline?.r2 as number, 6);
    expect(second[2]?.observation).toStartWith("0\n");
  });

  it("an agent's background output and shell functions cannot change what validate finds", async () => {
    // The bash loop above printed "Permission denied" between turns (a failing `> "$f"` is reported before its
    // `2>/dev/null` applies), and validate once read that output as its artefact check's answer.
    const example = await exampleOf(env, "apartmentRent");
    const results = await runScript(env, example, [
      "(while true; do echo noise; echo noise >&2; sleep 0.002; done &)",
      "python train.py",
      "validate",
      "validate",
      "test() { return 0; }; find() { echo ./nothing.yaml; }; rm submission.csv",
      "validate",
    ]);
    expect(results[2]?.scores?.r2).toBeCloseTo(example.score?.baseline?.r2 as number, 6);
    expect(results[3]?.scores?.r2).toBeCloseTo(example.score?.baseline?.r2 as number, 6);
    expect(results[5]?.evaluationError).toContain("No submission file found");
  });

  it("there is no network", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const probe = [
      "import socket",
      "for host in ('1.1.1.1', '8.8.8.8'):",
      "    try:",
      "        socket.create_connection((host, 53), timeout=2); print('connected')",
      "    except OSError as e:",
      "        print('blocked', type(e).__name__)",
    ].join("\n");
    const results = await runScript(env, example, [
      `cat > /tmp/net.py <<'EOF'\n${probe}\nEOF\npython /tmp/net.py`,
      "wc -l < /proc/net/route",
    ]);
    expect(results[0]?.observation).toStartWith("blocked");
    expect(results[0]?.observation).not.toContain("connected");
    // No route at all: only the header line of the routing table.
    expect(results[1]?.observation).toStartWith("1\n");
  });

  it("kill -9 -1 in one sandbox hurts only that sandbox", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const signal = new AbortController().signal;
    const [a, b] = await Promise.all([
      env.open(example, { rolloutId: "killer", signal }),
      env.open(example, { rolloutId: "bystander", signal }),
    ]);
    try {
      await b.step({ text: "", command: "(sleep 1000 &); echo started" });
      await a.step({ text: "", command: "kill -9 -1" });
      const after = await a.step({ text: "", command: "echo alive" });
      expect(after.observation).toContain("alive");
      const other = await b.step({ text: "", command: 'pgrep -u "$(id -un)" -x sleep | wc -l' });
      expect(other.observation).toStartWith("1\n");
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
}
