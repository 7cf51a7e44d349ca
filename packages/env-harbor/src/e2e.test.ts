import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { dockerClient, labelledContainers } from "@air/sandbox";
import { OWN_TASKS, scratchDataset } from "./testing/fixtures.ts";

const REPO = resolve(import.meta.dir, "../../..");
let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "air-harbor-e2e-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `bun run <bin> <args>` as a user would, with a timeout. */
async function cli(bin: "rl" | "eval", args: string[], timeoutMs = 300_000) {
  const child = Bun.spawn(["bun", join(REPO, `packages/launcher/src/bin/${bin}.ts`), ...args], {
    cwd: REPO,
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  try {
    const [stdout, stderr, code] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ]);
    return { code, out: stdout + stderr };
  } finally {
    clearTimeout(timer);
  }
}

/** A config like configs/harbor/oracle.toml, in the scratch dir, with its own output dir and [env] lines. */
function config(name: string, env: string, policy = 'commands = []\nafter = "submit"'): string {
  const file = join(dir, `${name}.toml`);
  writeFileSync(
    file,
    `logger = []
[run]
name = "${name}"
output_dir = "${join(dir, "outputs")}"
max_steps = 1
[model]
name = "none"
[orchestrator]
batch_size = 4
rollouts_per_example = 1
max_concurrent_rollouts = 2
max_off_policy_steps = 0
max_turns = 4
[env]
plugin = "harbor"
${env}
[policy]
plugin = "scripted"
${policy}
[trainer]
plugin = "none"
[advantage]
plugin = "grpo"
[strategy]
plugin = "branching"
[reward]
plugin = "delta"
[eval]
samples_per_example = 1
`,
  );
  return file;
}

/** The per-task mean reward of an evaluation's eval.json. */
function rewards(name: string): Record<string, number> {
  const report = JSON.parse(readFileSync(join(dir, "outputs", name, "evaluations", "eval.json"), "utf8")) as {
    tasks: Array<{ task: string; meanReward: number }>;
  };
  return Object.fromEntries(report.tasks.map((t) => [t.task, Math.round(t.meanReward * 1000) / 1000]));
}

describe("eval and rl on docker", () => {
  test("the oracle reproduces every own task's solution; an empty run scores 0; no container is left", async () => {
    const oracle = await cli("eval", [config("oracle", `dataset = "${OWN_TASKS}"\noracle = true`)]);
    expect(oracle.code).toBe(0);
    expect(rewards("oracle")).toEqual({
      "fizzbuzz-partial": 1,
      "hello-file": 1,
      "ml-regression": 0.953,
      "sum-numbers": 1,
    });
    const empty = await cli("eval", [config("empty", `dataset = "${OWN_TASKS}"`)]);
    expect(empty.code).toBe(0);
    expect(rewards("empty")).toEqual({
      "fizzbuzz-partial": 0,
      "hello-file": 0,
      "ml-regression": 0,
      "sum-numbers": 0,
    });
    expect(await labelledContainers(dockerClient(), join(dir, "outputs", "oracle"))).toEqual([]);
  }, 600_000);

  test("rl: an agent's commands (the scripted policy) solve a task and earn its reward", async () => {
    const file = config(
      "rl-docker",
      `dataset = "${OWN_TASKS}"\ntasks = ["hello-file", "fizzbuzz-partial"]`,
      `tasks = { "hello-file" = ["echo 'Hello, world!' > hello.txt", "submit"], "fizzbuzz-partial" = ["printf 'print(1)\\\\n' >> fizzbuzz.py", "submit"] }`,
    );
    const run = await cli("rl", [file, "--orchestrator.batch_size", "2"]);
    expect(run.code).toBe(0);
    expect(run.out).toContain("run completed: 1 step(s), rollouts 2 ok / 0 failed");
    // hello-file 1; fizzbuzz prints one "1" line: 1 of 30 lines right
    expect(run.out).toMatch(/reward 0\.517 \[0\.03, 1\.00\]/);
  }, 600_000);
});

describe("bad input at rl check time", () => {
  test("a Dockerfile that fails to build and a missing test.sh fail rl check, naming folder and file; skip_invalid_tasks runs without them", async () => {
    const d = await scratchDataset(["hello-file", "fizzbuzz-partial", "sum-numbers"], {
      "fizzbuzz-partial/environment/Dockerfile":
        "FROM air-mlgym-test:latest\nRUN echo broken-on-purpose && exit 3\n",
      "sum-numbers/tests/test.sh": null,
    });
    try {
      const check = await cli("rl", ["check", config("bad", `dataset = "${d.dir}"`)]);
      expect(check.code).toBe(2);
      expect(check.out).toMatch(
        /fail\s+harbor task fizzbuzz-partial: .*fizzbuzz-partial: environment\/Dockerfile: docker build failed/,
      );
      expect(check.out).toContain("broken-on-purpose");
      expect(check.out).toMatch(/fail\s+harbor task sum-numbers: .*sum-numbers: tests\/test\.sh: missing/);
      expect(check.out).toMatch(/ok\s+harbor task hello-file/);
      const run = await cli("eval", [
        config("skip", `dataset = "${d.dir}"\noracle = true\nskip_invalid_tasks = true`),
      ]);
      expect(run.code).toBe(0);
      expect(run.out).toMatch(/left out \(skip_invalid_tasks\).*fizzbuzz-partial: environment\/Dockerfile/);
      expect(rewards("skip")).toEqual({ "hello-file": 1 });
    } finally {
      await d.remove();
    }
  }, 600_000);

  test("rl check on a task whose base image is missing names [env] base_images, never docker.image", async () => {
    const d = await scratchDataset(["hello-file"], {
      "hello-file/environment/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\n",
    });
    try {
      const check = await cli("rl", ["check", config("no-base", `dataset = "${d.dir}"`)]);
      expect(check.code).toBe(2);
      expect(check.out).toMatch(/fail\s+image python:3\.12-slim present: .*set \[env\] base_images/);
      expect(check.out).toMatch(
        /fail\s+harbor task hello-file: .*environment\/Dockerfile: base image python:3\.12-slim is not in the engine's image store.*\[env\] base_images/,
      );
      expect(check.out).not.toContain("docker.image");
    } finally {
      await d.remove();
    }
  }, 300_000);
});

describe("local (bubblewrap)", () => {
  test("the tasks that need no build run locally with the docker scores; one with a RUN is refused with the line", async () => {
    const tasks = 'tasks = ["hello-file", "fizzbuzz-partial", "ml-regression"]';
    const oracle = await cli("eval", [
      config("local-oracle", `dataset = "${OWN_TASKS}"\nruntime = "local"\noracle = true\n${tasks}`),
    ]);
    expect(oracle.code).toBe(0);
    expect(rewards("local-oracle")).toEqual({
      "fizzbuzz-partial": 1,
      "hello-file": 1,
      "ml-regression": 0.953,
    });
    const run = await cli("rl", [
      config("local-rl", `dataset = "${OWN_TASKS}"\nruntime = "local"\n${tasks}`),
      "--orchestrator.batch_size",
      "3",
    ]);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/reward 0\.000/);
    const refused = await cli("rl", [
      "check",
      config("local-bad", `dataset = "${OWN_TASKS}"\nruntime = "local"\ntasks = ["sum-numbers"]`),
    ]);
    expect(refused.code).toBe(2);
    expect(refused.out).toMatch(
      /sum-numbers: environment\/Dockerfile: Dockerfile line 3: RUN needs a docker build/,
    );
  }, 600_000);
});

describe("teardown", () => {
  test("rl killed with SIGKILL mid-episode: its reaper removes the run's containers", async () => {
    const file = config(
      "killed",
      `dataset = "${OWN_TASKS}"\ntasks = ["hello-file", "fizzbuzz-partial"]`,
      'commands = ["sleep 100"]',
    );
    const runDir = join(dir, "outputs", "killed");
    const child = Bun.spawn(
      ["bun", join(REPO, "packages/launcher/src/bin/rl.ts"), file, "--orchestrator.batch_size", "2"],
      {
        cwd: REPO,
        stdout: "ignore",
        stderr: "ignore",
      },
    );
    const docker = dockerClient();
    const until = async (ok: (n: number) => boolean, what: string) => {
      for (let i = 0; i < 240; i++) {
        const n = (await labelledContainers(docker, runDir)).length;
        if (ok(n)) return n;
        await Bun.sleep(500);
      }
      throw new Error(`waited 120 s for ${what}`);
    };
    try {
      expect(await until((n) => n >= 2, "the episode containers")).toBe(2);
    } finally {
      child.kill("SIGKILL");
      await child.exited;
    }
    expect(await until((n) => n === 0, "the reaper to remove the containers")).toBe(0);
  }, 300_000);
});

describe("tree rollouts ([orchestrator.tree]) fork Harbor sessions", () => {
  for (const runtime of ["docker", "local"] as const) {
    test(`${runtime}: two siblings forked after turn 1 each see the parent's file and only their own`, async () => {
      // reward 1 only when the WORKDIR holds the parent's root.txt and exactly one sibling file
      const d = await scratchDataset(["hello-file"], {
        "hello-file/tests/test.sh":
          "#!/bin/bash\nn=$(ls /app | grep -c '^sib-')\nif [ \"$n\" = 1 ] && [ -f /app/root.txt ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
      });
      try {
        const file = config(
          `tree-${runtime}`,
          `dataset = "${d.dir}"\nruntime = "${runtime}"`,
          `commands = ["echo root > root.txt", "touch sib-$(cat /proc/sys/kernel/random/uuid).txt; ls"]\nafter = "submit"`,
        );
        const tree = "[orchestrator.tree]\nroots = 1\nbranching_factor = 2\nbranch_turns = [1]\n";
        writeFileSync(file, readFileSync(file, "utf8").replace("[env]", `${tree}[env]`));
        const run = await cli("rl", [
          file,
          "--orchestrator.batch_size",
          "2",
          "--orchestrator.rollouts_per_example",
          "2",
        ]);
        expect(run.code).toBe(0);
        expect(run.out).toMatch(/3 ok \/ 0 failed \(2 leaves\)/);
        expect(run.out).toMatch(/reward 1\.000/);
        if (runtime === "docker")
          expect(await labelledContainers(dockerClient(), join(dir, "outputs", `tree-${runtime}`))).toEqual(
            [],
          );
      } finally {
        await d.remove();
      }
    }, 600_000);
  }
});
