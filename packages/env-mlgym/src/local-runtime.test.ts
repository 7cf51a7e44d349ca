import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertBwrapWorks, bwrapArgv, LocalRuntime, runProcess, SANDBOX_WORKSPACE } from "@air/sandbox";
import { buildTaskFiles } from "./bundle.ts";
import { mlgymConfigSchema } from "./config.ts";
import { createMlgymEnvironment } from "./plugin.ts";
import type { Task } from "./task.ts";
import { loadTaskSet } from "./task-set.ts";
import { attackSuite } from "./testing/attacks.ts";
import { REPO_ROOT, removeTestRunDirs, testContext } from "./testing/context.ts";
import { exampleOf, runScript } from "./testing/script.ts";
import { makeEnv } from "./testing/suite.ts";

afterAll(removeTestRunDirs);

const FIXTURES = join(import.meta.dir, "..", "fixtures");

describe("local runtime (bwrap): attacks", () => {
  attackSuite("local", true);
});

describe("local runtime (bwrap): sandbox layout", () => {
  test("the agent sees MLGym's layout; only the workspace, /tmp and /dev/shm are writable", async () => {
    const { env } = await makeEnv("local", `air-test-layout-${process.pid}`);
    try {
      const results = await runScript(env, await exampleOf(env, "apartmentRent"), [
        "pwd; id -un; echo $HOME",
        'for d in /home/agent/workspace /tmp /dev/shm /home/agent / /usr /etc /opt; do touch $d/.w 2>/dev/null && echo "w $d"; done; true',
        "ulimit -u; hostname",
      ]);
      expect(results[0]?.observation).toStartWith(`${SANDBOX_WORKSPACE}\nagent\n/home/agent\n`);
      expect(results[1]?.observation).toStartWith(
        "w /home/agent/workspace\nw /tmp\nw /dev/shm\n(Current Step",
      );
      expect(results[2]?.observation).toStartWith("1024\nsandbox\n");
    } finally {
      await env.close?.();
    }
  });

  test("a fork bomb stops at local.max_processes and leaves the next sandbox alone", async () => {
    const { env } = await makeEnv("local", `air-test-nproc-${process.pid}`, { local: { max_processes: 32 } });
    const bomb = [
      "import os, time",
      "n = 0",
      "for i in range(200):",
      "    try:",
      "        pid = os.fork()",
      "    except OSError:",
      "        break",
      "    if pid == 0:",
      "        time.sleep(5)",
      "        os._exit(0)",
      "    n += 1",
      "print('forked', n)",
    ].join("\n");
    try {
      const example = await exampleOf(env, "apartmentRent");
      const signal = new AbortController().signal;
      const [a, b] = await Promise.all([
        env.open(example, { rolloutId: "bomb", signal }),
        env.open(example, { rolloutId: "calm", signal }),
      ]);
      try {
        const out = await a.step({
          text: "",
          command: `cat > /tmp/bomb.py <<'EOF'\n${bomb}\nEOF\npython /tmp/bomb.py`,
        });
        const forked = Number(/forked (\d+)/.exec(out.observation)?.[1]);
        expect(forked).toBeGreaterThan(0);
        expect(forked).toBeLessThan(32);
        const calm = await b.step({
          text: "",
          command: "for i in 1 2 3 4 5 6 7 8; do (true &); done; echo calm",
        });
        expect(calm.observation).toStartWith("calm\n");
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    } finally {
      await env.close?.();
    }
  });

  test("bwrap's argv mounts the system read-only and unshares the network and PIDs", () => {
    const argv = bwrapArgv({
      workspace: "/srv/ws",
      python: "/usr/bin/python3",
      identity: { kind: "userns" },
      maxProcesses: 64,
      memoryMb: 512,
      command: ["bash"],
    });
    expect(argv).toContain("--unshare-net");
    expect(argv).toContain("--unshare-pid");
    expect(argv).toContain("--die-with-parent");
    expect(argv.join(" ")).toContain("--ro-bind /usr /usr");
    expect(argv.join(" ")).toContain(`--bind /srv/ws ${SANDBOX_WORKSPACE}`);
    expect(argv.join(" ")).not.toContain("--bind / ");
    expect(argv.at(-1)).toBe("bash");
    expect(argv).toContain("--unshare-user");
    expect(argv).not.toContain("setpriv");
  });
});

describe("local runtime (bwrap): staged sandboxes", () => {
  test("as many sandboxes are staged as the task has running (at most maxStaged), each fresh", async () => {
    const root = mkdtempSync(join(tmpdir(), "air-staged-"));
    const ctx = testContext(`air-test-staged-${process.pid}`);
    const config = mlgymConfigSchema.parse({ tasks: ["apartmentRent"], runtime: "local" });
    const { byId } = await loadTaskSet(config, REPO_ROOT);
    const files = await buildTaskFiles(byId.get("apartmentRent") as Task, join(ctx.runDir, "tasks"));
    const runtime = new LocalRuntime({ root, python: "/usr/bin/python3", maxStaged: 2 });
    try {
      const boxes = await Promise.all([1, 2, 3].map((i) => runtime.acquire(files, { rolloutId: `s${i}` })));
      expect(runtime.stagedCount(files.key)).toBe(2);
      await Promise.all(boxes.map((b) => b.exec("echo junk > junk.txt", 10_000)));
      await Promise.all(boxes.map((b) => runtime.release(b)));
      const again = await runtime.acquire(files, { rolloutId: "s4" });
      expect((await again.exec("ls", 10_000)).output).toBe("README.md\ndata\nevaluate.py\ntrain.py\n");
      expect(runtime.stagedCount(files.key)).toBe(1);
      await runtime.release(again);
    } finally {
      await runtime.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("local runtime (bwrap): evaluation identity", () => {
  test.skipIf(process.getuid?.() !== 0)(
    "as root, an evaluation runs as a uid that is neither root nor the agent's",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "air-evaluid-"));
      const runtime = new LocalRuntime({
        root: join(dir, "sandboxes"),
        python: "/usr/bin/python3",
        stageNext: false,
      });
      try {
        cpSync(
          join(FIXTURES, "hardcoded-path", "data", "hardcodedTask", "data"),
          join(dir, "task", "workspace", "data"),
          {
            recursive: true,
          },
        );
        mkdirSync(join(dir, "task", "evaluation"), { recursive: true });
        writeFileSync(
          join(dir, "task", "evaluation", "evaluate.py"),
          "import json, os\nprint(json.dumps({'uid': os.getuid()}))\n",
        );
        const box = await runtime.acquire(
          { key: "uid", dir: join(dir, "task"), readOnly: ["data"] },
          { rolloutId: "u" },
        );
        const agent = Number((await box.exec("id -u", 10_000)).output.trim());
        const evaluations = await Promise.all(
          [1, 2].map(() => box.evaluate({ command: "python evaluate.py", timeoutMs: 30_000 })),
        );
        const uids = evaluations.map((e) => JSON.parse(e.stdout).uid as number);
        expect(agent).toBeGreaterThan(0);
        for (const uid of uids) expect([0, agent]).not.toContain(uid);
        expect(new Set(uids).size).toBe(2);
        await runtime.release(box);
      } finally {
        await runtime.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe("local runtime (bwrap): when bwrap cannot run", () => {
  test("the error says why and names runtime = docker and isolation = none", async () => {
    const attempt = assertBwrapWorks({ kind: "userns" }, "/nonexistent/bwrap");
    await expect(attempt).rejects.toThrow(/bubblewrap \(bwrap\).*cannot run here: .*\/nonexistent\/bwrap/);
    await expect(attempt).rejects.toThrow('env.runtime = "docker"');
    await expect(attempt).rejects.toThrow('env.local.isolation = "none"');
    await expect(assertBwrapWorks({ kind: "userns" })).resolves.toBeUndefined();
  });

  test('isolation = "none" runs unsandboxed and warns that evaluations can be forged', async () => {
    const warnings: string[] = [];
    const ctx = testContext(`air-test-none-${process.pid}`);
    const log = { ...ctx.log, warn: (message: string) => void warnings.push(message) };
    const config = mlgymConfigSchema.parse({
      tasks: ["apartmentRent"],
      runtime: "local",
      local: { isolation: "none" },
    });
    const env = await createMlgymEnvironment(config, { ...ctx, log });
    try {
      expect(warnings.join("\n")).toContain("can read and forge evaluations");
      const [pwd] = await runScript(env, await exampleOf(env, "apartmentRent"), ["pwd"]);
      expect(pwd?.observation).not.toStartWith(`${SANDBOX_WORKSPACE}\n`);
    } finally {
      await env.close?.();
    }
  });
});

describe("project tasks with MLGym's quirks, on the local runtime", () => {
  test("an evaluator that hard-codes /home/agent/workspace scores; the ground truth stays hidden", async () => {
    const { env } = await makeEnv("local", `air-test-hardcoded-${process.pid}`, {
      mlgym_root: join(FIXTURES, "hardcoded-path"),
      tasks: ["hardcodedTask"],
    });
    try {
      const results = await runScript(env, await exampleOf(env, "hardcodedTask"), [
        "ls data",
        "printf 'id,label\\n1,1\\n2,0\\n3,0\\n4,1\\n' > submission.csv",
        "validate",
      ]);
      // data files are mode 555, as MLGym's reset makes them (`ls -F` marks them executable)
      expect(results[0]?.observation).toStartWith("train.csv*\n(Current Step");
      expect(results[2]?.scores).toEqual({ accuracy: 0.75 });
    } finally {
      await env.close?.();
    }
  });

  test("data made by a helper script, named by file or id, metric printed in another case", async () => {
    const root = mkdtempSync(join(tmpdir(), "air-generated-"));
    try {
      cpSync(join(FIXTURES, "generated-data"), root, { recursive: true });
      const helpers = join(root, "data", "generatedTask", "_helpers");
      const made = await runProcess(["/usr/bin/python3", "_generate_split.py"], {
        cwd: helpers,
        timeoutMs: 30_000,
      });
      expect(made.exitCode).toBe(0);
      const { env } = await makeEnv("local", `air-test-generated-${process.pid}`, {
        mlgym_root: root,
        tasks: ["generated", "generatedTask"],
        metric_directions: { generated: { rmse: "minimize" } },
      });
      try {
        const examples = await env.examples("train");
        expect(examples.map((e) => [e.id, e.task])).toEqual([["generatedTask", "generatedTask"]]);
        expect(examples[0]?.score).toMatchObject({
          priorityMetric: "RMSE",
          directions: { RMSE: "minimize" },
        });
        const results = await runScript(env, examples[0] as (typeof examples)[number], [
          "ls data",
          "printf 'id,y\\n10,31\\n11,34\\n12,37\\n13,40\\n' > submission.csv",
          "validate",
        ]);
        expect(results[0]?.observation).toStartWith("test.csv*\ntrain.csv*\n(Current Step");
        expect(results[2]?.scores).toEqual({ RMSE: 0 });
      } finally {
        await env.close?.();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
