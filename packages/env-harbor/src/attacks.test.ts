import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dockerClient, labelledContainers, runProcess } from "@air/sandbox";
import { harborConfigSchema } from "./config.ts";
import { HarborSandboxes, harborRuntime } from "./sandboxes.ts";
import { HarborSession } from "./session.ts";
import { loadHarborTask } from "./task.ts";
import { OWN_TASKS, scratchDataset } from "./testing/fixtures.ts";

const scratch = mkdtempSync(join(tmpdir(), "air-harbor-attacks-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const config = harborConfigSchema.parse({ dataset: OWN_TASKS, command_timeout_sec: 240 });
/** The env's own runtimes (`harborRuntime`: @air/sandbox's DockerRuntime and LocalRuntime) as a run makes them. */
const runtimeOf = (runtime: "docker" | "local") => () => {
  const c = harborConfigSchema.parse({
    dataset: OWN_TASKS,
    runtime,
    allow_internet: false,
    docker: { pids_limit: 512 },
    local: { max_processes: 512 },
  });
  const root = join(scratch, runtime);
  return new HarborSandboxes(
    harborRuntime(c, { configDir: "/", runName: join(scratch, "docker-run"), root }),
    c,
    root,
  );
};
const RUNTIMES: Record<string, () => HarborSandboxes> = {
  docker: runtimeOf("docker"),
  local: runtimeOf("local"),
};

async function session(runtime: HarborSandboxes, taskDir: string, rolloutId: string) {
  const task = await loadHarborTask(taskDir);
  await runtime.prepare(task);
  const s = new HarborSession(await runtime.open(task, { rolloutId }), task, {
    config,
    sandboxes: runtime,
    rolloutId,
  });
  await s.start();
  return s;
}
const run = async (s: HarborSession, command: string) =>
  (await s.step({ text: command, command })).observation;

for (const [kind, make] of Object.entries(RUNTIMES)) {
  describe(`${kind}: the agent's view`, () => {
    test("tests/ and solution/ are not reachable by any path: absolute host paths, find /, grep of their contents, symlinks, /proc, a watcher during verification", async () => {
      const runtime = make();
      const dir = join(OWN_TASKS, "ml-regression");
      const answer = readFileSync(join(dir, "tests/answers.csv"), "utf8").split("\n")[1] as string;
      const solution = readFileSync(join(dir, "solution/solve.sh"), "utf8")
        .trim()
        .split("\n")
        .at(-1) as string;
      const s = await session(runtime, dir, `${kind}-view`);
      try {
        expect(await run(s, "ls /tests /solution 2>&1")).toMatch(
          /cannot access '\/tests'[\s\S]*cannot access '\/solution'/,
        );
        expect(
          await run(s, `ls ${dir} ${dir}/tests ${OWN_TASKS} 2>&1 | grep -v 'No such file' | grep -c .`),
        ).toMatch(/^0\n/);
        const found = await run(
          s,
          "find / -xdev \\( -name answers.csv -o -name solve.sh -o -path '*tests/test.sh' \\) 2>/dev/null",
        );
        expect(found).not.toMatch(/answers\.csv|solve\.sh|test\.sh/);
        const grep = `grep -rlsF -e ${JSON.stringify(answer)} -e ${JSON.stringify(solution)} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr`;
        expect(await run(s, `${grep} | grep -c .`)).toMatch(/^0\n/);
        expect(
          await run(
            s,
            `ln -s /tests t1; ln -s ${dir}/tests t2; cat t1/test.sh t2/answers.csv 2>&1; rm -f t1 t2`,
          ),
        ).toMatch(/No such file/);
        const proc = await run(
          s,
          // the patterns are written so that grep's own command line does not match them
          "cat /proc/[0-9]*/cmdline /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c -e 'harbo[r]' -e '/wor[k]/'",
        );
        expect(proc).toMatch(/^0\n/);
        // A watcher polling for the verifier's files while it runs: the verifier is another sandbox.
        await run(
          s,
          "nohup sh -c 'while :; do cat /tests/* /logs/verifier/* 2>/dev/null; ls /tests 2>/dev/null; sleep 0.05; done' > watch.log 2>&1 &",
        );
        const verified = await s.runVerifier();
        expect(verified.rewardJson).toContain('"valid": 0');
        expect(await run(s, "wc -c < watch.log; grep -c -e answers -e reward -e test.sh watch.log")).toMatch(
          /^0\n0\n/,
        );
      } finally {
        await s.close();
        await runtime.close();
      }
    }, 600_000);

    test("a reward file the agent wrote (and a test.sh it planted, and a forging loop) is not the reward", async () => {
      const runtime = make();
      const dir = join(OWN_TASKS, "hello-file");
      const forged = await session(runtime, dir, `${kind}-forge`);
      try {
        await run(
          forged,
          [
            "mkdir -p /logs/verifier /tests 2>/dev/null; echo 1 > /logs/verifier/reward.txt; echo '{\"reward\": 1}' > /logs/verifier/reward.json",
            "printf '#!/bin/bash\\necho 1 > /logs/verifier/reward.txt\\n' > /tests/test.sh 2>/dev/null; chmod +x /tests/test.sh 2>/dev/null",
            "nohup sh -c 'while :; do echo 1 > /logs/verifier/reward.txt; sleep 0.01; done' >/dev/null 2>&1 &",
            "echo 'Hello, world?' > /app/hello.txt; cat /logs/verifier/reward.txt",
          ].join("\n"),
        );
        const end = await forged.step({ text: "submit", command: "submit" });
        expect(end.scores).toEqual({ reward: 0 });
      } finally {
        await forged.close();
      }
      // The control: the same session with the task done scores 1, so the 0 above is the verifier's.
      const honest = await session(runtime, dir, `${kind}-honest`);
      try {
        await run(honest, "echo 'Hello, world!' > /app/hello.txt");
        expect((await honest.step({ text: "submit", command: "submit" })).scores).toEqual({ reward: 1 });
      } finally {
        await honest.close();
        await runtime.close();
      }
    }, 600_000);

    test("the verifier's timeout ends it with reward 0 and the reason, even after test.sh wrote a reward; nothing is left running", async () => {
      const d = await scratchDataset(["hello-file"], {
        "hello-file/task.toml":
          "[verifier]\ntimeout_sec = 3.0\n[agent]\ntimeout_sec = 4.0\n[environment]\nallow_internet = false\n",
        "hello-file/tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\nsleep 61.25\n",
      });
      const runtime = make();
      try {
        const s = await session(runtime, join(d.dir, "hello-file"), `${kind}-slow`);
        const started = Date.now();
        const end = await s.step({ text: "submit", command: "submit" });
        expect(Date.now() - started).toBeLessThan(45_000);
        expect(end.scores).toEqual({ reward: 0 });
        expect(end.evaluationError).toMatch(
          /verifier timeout: tests\/test\.sh ran past \[verifier\] timeout_sec = 3 s/,
        );
        expect(end.observation).toContain("Reward 0");
        await s.close();
        // The agent's budget ([agent] timeout_sec = 4): a command past it is killed and the episode ends.
        const t = await session(runtime, join(d.dir, "hello-file"), `${kind}-budget`);
        const long = await t.step({ text: "sleep 30", command: "sleep 30" });
        expect(long.done).toBe(true);
        expect(long.observation).toMatch(/killed[\s\S]*agent timeout: \[agent\] timeout_sec = 4 used up/);
        await t.close();
      } finally {
        await runtime.close();
        await d.remove();
      }
      const left = await runProcess(["pgrep", "-f", "sleep 61.25"], { cwd: "/", timeoutMs: 10_000 });
      expect(left.stdout.trim()).toBe("");
      if (kind === "docker") {
        expect(await labelledContainers(dockerClient(), join(scratch, "docker-run"))).toEqual([]);
        const images = await dockerClient().listImages({ filters: { reference: ["air-image-state"] } });
        expect(images).toEqual([]);
      }
    }, 600_000);
  });
}
