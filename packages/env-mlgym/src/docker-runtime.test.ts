import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AirError, type Environment, EventBus, PendingWork, type Policy, runRollout } from "@air/core";
import { removeContainersByLabel } from "@air/sandbox";
import Docker from "dockerode";
import { createMlgymEnvironment } from "./plugin.ts";
import type { MlgymSession } from "./session.ts";
import { attackSuite } from "./testing/attacks.ts";
import { dockerAvailable, REPO_ROOT, removeTestRunDirs, TEST_IMAGE } from "./testing/context.ts";
import { exampleOf, runScript } from "./testing/script.ts";
import { snapshotSuite } from "./testing/snapshot-suite.ts";
import { makeEnv, sharedSuite } from "./testing/suite.ts";

afterAll(removeTestRunDirs);

const available = await dockerAvailable();
const docker = new Docker();

/** Containers of a run; the runtime labels them `air.run=<run dir>`. */
async function runContainers(runLabel: string) {
  return docker.listContainers({
    all: true,
    filters: { label: [`air.run=${runLabel}`, "air.managed=true"] },
  });
}

describe("mlgym env, docker runtime", () => {
  sharedSuite("docker", available);
  snapshotSuite("docker", available);
});

describe("docker runtime: attacks", () => {
  attackSuite("docker", available);
});

describe("docker runtime specifics", () => {
  const runName = `air-test-docker-faults-${process.pid}`;
  let env: Environment;
  let runLabel = "";
  beforeAll(async () => {
    if (!available) return;
    const made = await makeEnv("docker", runName);
    env = made.env;
    runLabel = made.ctx.runDir;
  });
  afterAll(async () => {
    await env?.close?.();
    if (available) await removeContainersByLabel(docker, runLabel);
  });
  const it = (name: string, fn: () => Promise<void>, timeoutMs = 90_000) =>
    test.skipIf(!available)(name, fn, timeoutMs);

  it("results are identical to the local runtime's", async () => {
    const local = await makeEnv("local", `air-test-compare-${process.pid}`);
    try {
      for (const task of ["apartmentRent", "rpsTournament"]) {
        const commands =
          task === "apartmentRent"
            ? ["python train.py", "validate", "python train.py --model forest", "submit"]
            : [
                "validate",
                "open strategy.py",
                "edit 12:12\n    return history[-1][1] if history else 0\nend_of_edit",
                "submit",
              ];
        const [a, b] = await Promise.all([
          runScript(env, await exampleOf(env, task), commands),
          runScript(local.env, await exampleOf(local.env, task), commands),
        ]);
        const scores = (r: typeof a) => r.map((x) => x.scores).filter(Boolean);
        expect(scores(a)).toHaveLength(2);
        expect(scores(a)).toEqual(scores(b));
      }
    } finally {
      await local.env.close?.();
    }
  });

  it("the quirk fixtures score identically on local (bwrap) and docker", async () => {
    const fixtures = join(import.meta.dir, "..", "fixtures");
    const cases = [
      {
        root: "hardcoded-path",
        task: "hardcodedTask",
        commands: ["printf 'id,label\\n1,1\\n2,0\\n3,1\\n4,1\\n' > submission.csv", "validate", "submit"],
      },
      {
        root: "known-game",
        task: "prisonersDilemma",
        commands: [
          "validate",
          "printf 'def row_strategy(history):\\n    return 1\\n' > strategy.py",
          "submit",
        ],
      },
    ];
    for (const c of cases) {
      const extra = { mlgym_root: join(fixtures, c.root), tasks: [c.task] };
      const [d, l] = await Promise.all([
        makeEnv("docker", `${runName}-parity-${c.root}`, extra),
        makeEnv("local", `air-test-parity-${c.root}-${process.pid}`, extra),
      ]);
      try {
        const [a, b] = await Promise.all([
          runScript(d.env, await exampleOf(d.env, c.task), c.commands),
          runScript(l.env, await exampleOf(l.env, c.task), c.commands),
        ]);
        const scores = (r: typeof a) => r.map((x) => x.scores).filter(Boolean);
        expect(scores(a)).toHaveLength(2);
        expect(scores(a)).toEqual(scores(b));
        expect(a.map((x) => x.observation)).toEqual(b.map((x) => x.observation));
      } finally {
        await Promise.all([d.env.close?.(), l.env.close?.()]);
      }
    }
  });

  it("concurrent rollouts get separate containers and workspaces", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const ids = ["c1", "c2", "c3"];
    const sessions = await Promise.all(
      ids.map((rolloutId) => env.open(example, { rolloutId, signal: new AbortController().signal })),
    );
    try {
      await Promise.all(sessions.map((s, i) => s.step({ text: "", command: `echo ${ids[i]} > mine.txt` })));
      const seen = await Promise.all(
        sessions.map((s) => s.step({ text: "", command: "cat mine.txt; ls | wc -l; hostname" })),
      );
      const lines = seen.map((r) => r.observation.split("\n").slice(0, 3));
      expect(lines.map((l) => l[0])).toEqual(ids);
      expect(lines.map((l) => l[1])).toEqual(["5", "5", "5"]);
      expect(new Set(lines.map((l) => l[2])).size).toBe(3);
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
    }
  });

  it("containers carry the run labels, run without network, and are reused warm", async () => {
    const example = await exampleOf(env, "apartmentRent");
    await runScript(env, example, ["ls"], "label-check-1");
    const before = await runContainers(runLabel);
    await runScript(env, example, ["ls"], "label-check-2");
    const after = await runContainers(runLabel);
    expect(after.map((c) => c.Id).sort()).toEqual(before.map((c) => c.Id).sort());
    const info = await docker.getContainer(after[0]?.Id as string).inspect();
    expect(info.Config.Labels).toMatchObject({ "air.run": runLabel, "air.managed": "true" });
    expect(info.Config.Labels["air.rollout"]).toBeString();
    expect(info.HostConfig.NetworkMode).toBe("none");
    expect(info.HostConfig.Memory).toBe(2048 * 1024 * 1024);
  });

  it("the agent cannot gain privileges or write locked paths", async () => {
    const { env: locked } = await makeEnv("docker", `${runName}-locked`, {
      docker: { image: TEST_IMAGE, pool_size: 1, lock_paths: ["/home/agent/.profile", "/nonexistent"] },
    });
    try {
      const results = await runScript(locked, await exampleOf(locked, "apartmentRent"), [
        "grep NoNewPrivs /proc/self/status",
        "echo x >> ~/.profile",
        "id -un",
      ]);
      expect(results[0]?.observation).toMatch(/^NoNewPrivs:\s+1\n/);
      expect(results[1]?.observation).toContain("Permission denied");
      expect(results[2]?.observation).toStartWith("agent\n");
    } finally {
      await locked.close?.();
    }
  });

  it("the game's strategy runs as the agent during evaluation and cannot read the evaluator's files", async () => {
    const example = await exampleOf(env, "rpsTournament");
    const probe = [
      "edit 7:7",
      "import random",
      "try:",
      "    open('/home/agent/workspace/opponents.py').read()",
      "    raise SystemExit('read the opponents')",
      "except PermissionError:",
      "    pass",
      "end_of_edit",
    ].join("\n");
    const results = await runScript(env, example, ["open strategy.py", probe, "validate"]);
    expect(results[1]?.observation).toContain("File updated.");
    expect(results[2]?.scores?.Score).toBeCloseTo(example.score?.baseline?.Score as number, 6);
  });

  it("a container whose evaluation ran agent code as root is not reused; one that did not is", async () => {
    const root = mkdtempSync(join(tmpdir(), "air-mlgym-root-"));
    try {
      for (const dir of ["configs", "data"])
        cpSync(join(REPO_ROOT, dir), join(root, dir), { recursive: true });
      const yaml = join(root, "configs", "tasks", "rpsTournament.yaml");
      writeFileSync(yaml, readFileSync(yaml, "utf8").replace("evaluation_drops_privileges: true", ""));
      const name = `${runName}-taint`;
      const { env: tainted, ctx: taintedCtx } = await makeEnv("docker", name, { mlgym_root: root });
      try {
        const ids = async () => (await runContainers(taintedCtx.runDir)).map((c) => c.Id);
        const rps = await exampleOf(tainted, "rpsTournament");
        await runScript(tainted, rps, ["ls"]);
        const first = await ids();
        await runScript(tainted, rps, ["validate"]);
        expect(await ids()).toEqual([]);
        await runScript(tainted, await exampleOf(tainted, "apartmentRent"), ["python train.py", "validate"]);
        const second = await ids();
        expect(second).toHaveLength(1);
        expect(second).not.toEqual(first);
      } finally {
        await tainted.close?.();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("evaluators that hard-code /home/agent/workspace work; the ground truth stays hidden", async () => {
    const { env: fixture } = await makeEnv("docker", `${runName}-hardcoded`, {
      mlgym_root: join(import.meta.dir, "..", "fixtures", "hardcoded-path"),
      tasks: ["hardcodedTask"],
    });
    try {
      const results = await runScript(fixture, await exampleOf(fixture, "hardcodedTask"), [
        "ls data",
        "printf 'id,label\\n1,1\\n2,0\\n3,0\\n4,1\\n' > submission.csv",
        "validate",
      ]);
      expect(results[0]?.observation).toStartWith("train.csv*\n(Current Step");
      expect(results[2]?.scores).toEqual({ accuracy: 0.75 });
    } finally {
      await fixture.close?.();
    }
  });

  it("a background process cannot catch the ground truth during an evaluation", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const watcher =
      "(while true; do cat /home/agent/workspace/answer.csv /home/agent/workspace.air-held/answer.csv 2>/dev/null; done > /tmp/leak &)";
    const results = await runScript(env, example, [
      watcher,
      "python train.py",
      "validate",
      "validate",
      "sleep 0.3; wc -c < /tmp/leak",
    ]);
    expect(results[2]?.scores?.r2).toBeCloseTo(example.score?.baseline?.r2 as number, 6);
    expect(results[4]?.observation).toStartWith("0\n");
  });

  it("a workspace replaced by a symlink gets no score and cannot be snapshotted", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const session = (await env.open(example, {
      rolloutId: "swap",
      signal: new AbortController().signal,
    })) as MlgymSession;
    try {
      await session.step({ text: "", command: "python train.py" });
      await session.step({
        text: "",
        command: "cd /home/agent && mv workspace w2 && ln -s /home/agent/w2 workspace",
      });
      const validate = await session.step({ text: "", command: "validate" });
      expect(validate.scores).toBeUndefined();
      await expect(session.sandbox.snapshot()).rejects.toThrow(/root command failed/);
    } finally {
      await session.close();
    }
    const next = await runScript(env, example, [
      "ls -la /home/agent | grep -c workspace",
      "python train.py",
      "validate",
    ]);
    expect(next[0]?.observation).toStartWith("1\n");
    expect(next[2]?.scores?.r2).toBeCloseTo(example.score?.baseline?.r2 as number, 6);
  });

  it("a container killed mid-rollout fails the rollout as ENV_FAILED and is replaced", async () => {
    const example = await exampleOf(env, "apartmentRent");
    const session = await env.open(example, { rolloutId: "doomed", signal: new AbortController().signal });
    const [victim] = (await runContainers(runLabel)).filter((c) => c.State === "running");
    const before = (await session.step({ text: "", command: "echo before; cat /etc/hostname" })).observation;
    expect(before).toStartWith("before");
    // Docker names a container's host after its short id (the runtime sets no hostname): this session's container.
    const mine = docker.getContainer(before.match(/^[0-9a-f]{12}$/m)?.[0] ?? "no hostname in the output");
    await mine.kill();
    let failure: unknown;
    try {
      await session.step({ text: "", command: "echo after" });
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(AirError);
    expect((failure as AirError).code).toBe("ENV_FAILED");
    await session.close();
    expect(victim).toBeDefined();
    const retry = await runScript(env, example, ["python train.py", "validate"], "doomed-retry");
    expect(retry[1]?.scores?.r2).toBeCloseTo(example.score?.baseline?.r2 as number, 6);
  });

  it("no container with the run's label remains after close", async () => {
    const { env: other, ctx } = await makeEnv("docker", `${runName}-close`);
    await runScript(other, await exampleOf(other, "apartmentRent"), ["ls"]);
    expect((await runContainers(ctx.runDir)).length).toBeGreaterThan(0);
    await other.close?.();
    expect(await runContainers(ctx.runDir)).toEqual([]);
  });

  it("an unreachable engine is a clear error at create time", async () => {
    const previous = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = "unix:///nonexistent/docker.sock";
    try {
      const { mlgymConfigSchema } = await import("./config.ts");
      const { testContext } = await import("./testing/context.ts");
      const config = mlgymConfigSchema.parse({ tasks: ["apartmentRent"], runtime: "docker" });
      await expect(createMlgymEnvironment(config, testContext("unreachable"))).rejects.toThrow(
        /no docker engine answers/,
      );
    } finally {
      if (previous === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = previous;
    }
  });
});

describe("docker runtime under core's rollout loop", () => {
  const runName = `air-test-docker-loop-${process.pid}`;
  test.skipIf(!available)(
    "a container killed mid-rollout fails that attempt; the retry runs to the auto-submit",
    async () => {
      const { env, ctx } = await makeEnv("docker", runName, { max_steps: 3 });
      try {
        const example = await exampleOf(env, "apartmentRent");
        const commands = ["ls", "python train.py --model mean", "cat README.md"];
        let killNext = true;
        const policy: Policy = {
          version: 0,
          async generate(request) {
            if (request.turnIndex === 1 && killNext) {
              killNext = false;
              const [running] = await runContainers(ctx.runDir);
              await docker.getContainer(running?.Id as string).kill();
            }
            const command = commands[request.turnIndex] ?? "ls";
            return {
              action: { text: `\`\`\`\n${command}\n\`\`\``, command },
              promptTokenIds: [],
              completionTokenIds: [],
              completionLogprobs: [],
              finishReason: "stop",
              policyVersion: 0,
              temperature: 1,
            };
          },
        };
        const deps = {
          env,
          policy,
          bus: new EventBus(),
          pending: new PendingWork(),
          names: { env: "mlgym", policy: "scripted" },
          maxTurns: 3,
          timeouts: { env_open_ms: 60_000, env_step_ms: 60_000, generate_ms: 60_000 },
          signal: new AbortController().signal,
        };
        const input = { rolloutId: "loop-1", example, groupId: "0:apartmentRent", step: 0 };
        await expect(runRollout(deps, input)).rejects.toThrow(/died mid-rollout/);
        const trajectory = await runRollout(deps, input);
        expect(trajectory.turns.map((t) => t.action.command)).toEqual(commands);
        expect(trajectory.stopReason).toBe("max_turns");
        const last = trajectory.turns.at(-1);
        expect(last?.stepKind).toBe("auto_submit");
        expect(last?.scores?.r2).toBeLessThan(0.01);
      } finally {
        await env.close?.();
      }
      expect(await runContainers(ctx.runDir)).toEqual([]);
    },
    90_000,
  );
});

describe("after every docker test of this file", () => {
  test.skipIf(!available)("no container of this process's runs is left", async () => {
    const managed = await docker.listContainers({ all: true, filters: { label: ["air.managed=true"] } });
    const mine = managed.filter((c) => (c.Labels["air.run"] ?? "").includes(String(process.pid)));
    expect(mine).toEqual([]);
  });
});
