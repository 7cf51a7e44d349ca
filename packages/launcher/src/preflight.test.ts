import { afterAll, describe, expect, test } from "bun:test";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { definePlugin, loadConfig, parseOverrides } from "@air/core";
import { mlgymConfigSchema, mlgymLaunch, mlgymPreflight } from "@air/env-mlgym";
import { z } from "zod";
import { builtinRegistry } from "./builtins.ts";
import { dockerReachable } from "./containers.ts";
import { type CheckResult, runPreflight } from "./preflight.ts";
import { readProc } from "./proc.ts";
import { planOf } from "./run-plan.ts";
import { writePidFile } from "./rundir.ts";
import { LAUNCHER_SECTIONS, type RunConfig } from "./sections.ts";
import {
  FAKE_BIN,
  fakePath,
  preflightOf,
  RL_ENTRY,
  removeTempDirs,
  tempDir,
  writeFixtureConfig,
} from "./test-helpers.ts";

afterAll(removeTempDirs);

const dockerUp = await dockerReachable();
if (!dockerUp && process.env.CI === "true") throw new Error("CI=true but no docker engine is reachable");
const cleanup: Array<() => void> = [];
afterAll(() => {
  for (const c of cleanup) c();
});

/** The keys of the fixture's env section that the mlgym env does not know. */
const FIXTURE_ENV_KEYS = ["fail_examples", "stray_rejection", "container_image"];

/**
 * A stand-in "mlgym" env that accepts the fixture's env keys besides mlgym's, and hands mlgym's own keys to the
 * real mlgym plugin's launch hooks (what preflight calls).
 */
const mlgymStandIn = definePlugin({
  name: "mlgym",
  kind: "env",
  configSchema: z.record(z.string(), z.unknown()),
  create: () => ({ examples: async () => [], open: async () => Promise.reject(new Error("unused")) }),
  launch: {
    preflight: (config, ctx) => mlgymPreflight(mlgymOwn(config), ctx),
    needs: (config, ctx) => mlgymLaunch.needs?.(mlgymOwn(config), ctx) ?? {},
  },
});

function mlgymOwn(config: Record<string, unknown>) {
  const own = Object.fromEntries(Object.entries(config).filter(([k]) => !FIXTURE_ENV_KEYS.includes(k)));
  return mlgymConfigSchema.parse(own);
}

async function load(overrides: string[] = [], extra = ""): Promise<RunConfig> {
  const fx = await writeFixtureConfig({ extra });
  const registry = builtinRegistry().register(mlgymStandIn);
  return loadConfig(fx.file, {
    registry,
    overrides: parseOverrides(overrides),
    extraSections: LAUNCHER_SECTIONS,
  });
}

/** A fake nvidia-smi directory: GPUs of 81559 MiB; `used` per index; `apps` lines. */
function fakeGpus(count: number, used: Record<number, number> = {}, apps: string[] = []): NodeJS.ProcessEnv {
  const dir = tempDir("nvidia");
  const rows = Array.from({ length: count }, (_, i) => {
    const u = used[i] ?? 0;
    return `${i}, GPU-${i}, NVIDIA H100 80GB HBM3, 81559, ${u}, ${81559 - u}`;
  });
  writeFileSync(join(dir, "gpus.csv"), `${rows.join("\n")}\n`);
  writeFileSync(join(dir, "apps.csv"), apps.join("\n"));
  return { ...process.env, PATH: fakePath(), FAKE_NVIDIA_DIR: dir, CUDA_VISIBLE_DEVICES: undefined };
}

const find = (results: CheckResult[], name: RegExp) => results.filter((r) => name.test(r.name));
const failed = (results: CheckResult[]) => results.filter((r) => r.status === "fail");

describe("preflight: GPUs (fake nvidia-smi on PATH)", () => {
  const gpuArgs = ["--deployment.inference_gpu_ids", "[0]", "--deployment.trainer_gpu_ids", "[1, 2]"];

  test("requested GPUs that exist and are free pass", async () => {
    const results = await preflightOf(await load(gpuArgs), { env: fakeGpus(4) });
    expect(find(results, /requested GPUs exist/)[0]?.status).toBe("ok");
    expect(find(results, /free memory/).map((r) => r.status)).toEqual(["ok", "ok", "ok"]);
    expect(failed(results)).toEqual([]);
  });

  test("a GPU that does not exist fails, naming it", async () => {
    const results = await preflightOf(await load([...gpuArgs, "--deployment.env_gpu_ids", "[7]"]), {
      env: fakeGpus(4),
    });
    expect(failed(results).map((r) => r.message)).toEqual([
      "GPU(s) 7 requested, but this machine has 4 GPU(s) (0, 1, 2, 3)",
    ]);
  });

  test("too little free memory fails and names the PIDs holding it", async () => {
    const env = fakeGpus(4, { 0: 70_000 }, ["GPU-0, 4242, 69000, python", "GPU-1, 4343, 10, other"]);
    const results = await preflightOf(await load(gpuArgs), { env });
    const bad = failed(results);
    expect(bad.map((r) => r.name)).toEqual(["GPU 0 free memory (inference)"]);
    expect(bad[0]?.message).toContain("held by pid 4242 (python, 69000 MiB)");
    expect(bad[0]?.message).not.toContain("4343");
  });

  test("no nvidia-smi fails with a clear message", async () => {
    const env = { ...process.env, PATH: "/nonexistent" };
    const results = await preflightOf(await load(gpuArgs), { env });
    expect(find(results, /GPUs visible/)[0]?.message).toContain("nvidia-smi not found on PATH");
  });

  test("GPU counts take visible GPUs in order; too many fails", async () => {
    const counts = ["--deployment.num_infer_gpus", "1", "--deployment.num_train_gpus", "2"];
    const env = { ...fakeGpus(4), CUDA_VISIBLE_DEVICES: "3,1,2" };
    const results = await preflightOf(await load(counts), { env });
    expect(find(results, /requested GPUs exist/)[0]?.message).toBe("inference [3], trainer [1,2], env []");
    const tooMany = await preflightOf(await load(["--deployment.num_train_gpus", "5"]), {
      env: fakeGpus(4),
    });
    expect(failed(tooMany)[0]?.message).toContain("num_train_gpus = 5, but only 4 GPU(s) are left");
  });

  test("preflight checks the plan's GPUs and ports and plans neither itself", async () => {
    const run = planOf(await load(gpuArgs));
    const env = fakeGpus(4);
    const gpus = { map: { inference: [3], trainer: [1], env: [] } };
    const results = await runPreflight({ run, gpus }, { env });
    expect(find(results, /requested GPUs exist/)[0]?.message).toBe("inference [3], trainer [1], env []");
    const unplanned = await runPreflight({ run, gpus: { ...gpus, problem: "no map" } }, { env });
    expect(find(unplanned, /GPU map/)).toMatchObject([{ status: "fail", message: "no map" }]);
    const held: Server = createServer();
    await new Promise<void>((done) => held.listen(0, "127.0.0.1", done));
    const { port } = held.address() as { port: number };
    try {
      const ports = [{ what: "inference" as const, host: "127.0.0.1", port }];
      const busy = await runPreflight({ run: { ...run, ports }, gpus }, { env });
      expect(find(busy, /^port /)).toMatchObject([{ name: `port ${port} free (inference)`, status: "fail" }]);
    } finally {
      held.close();
    }
  });

  test("a config without GPUs runs no GPU check", async () => {
    const results = await preflightOf(await load(), { env: { ...process.env, PATH: "/nonexistent" } });
    expect(find(results, /GPU/)).toEqual([]);
  });
});

describe("preflight: machine", () => {
  test("a port in use fails; `rl` then exits 2 before starting anything", async () => {
    const fx = await writeFixtureConfig();
    const port = Number(/port = (\d+)/.exec(await Bun.file(fx.file).text())?.[1]);
    const server: Server = createServer();
    await new Promise<void>((done) => server.listen({ host: "127.0.0.1", port }, done));
    try {
      const out = spawnSync(process.execPath, [RL_ENTRY, fx.file], {
        encoding: "utf8",
        env: { ...process.env, PATH: fakePath() },
        timeout: 60_000,
      });
      expect(out.status).toBe(2);
      expect(out.stderr).toContain(`port ${port} free (inference)`);
      expect(out.stderr).toContain("is in use");
      expect(out.stderr).not.toContain("starting inference");
    } finally {
      server.close();
    }
  });

  test("programs missing from PATH fail with what to install", async () => {
    const results = await preflightOf(await load(), { env: { ...process.env, PATH: "/nonexistent" } });
    expect(failed(results).map((r) => r.name)).toEqual([
      "inference program `vllm` found",
      "trainer program `torchrun` found",
    ]);
    const ok = await preflightOf(await load(), { env: { ...process.env, PATH: FAKE_BIN } });
    expect(failed(ok)).toEqual([]);
  });

  test("a trainer command its plugin cannot build fails before anything starts, naming the key", async () => {
    const config = await load();
    config.root.trainer_process.config_file = undefined;
    config.root.trainer_process.trainer_config = { optim: { lrr: 1 } };
    const results = await preflightOf(config, { env: { ...process.env, PATH: FAKE_BIN } });
    expect(failed(results).map((r) => [r.name, r.message])).toEqual([
      ["trainer command", "[trainer_process] trainer_config: prime-rl 0.9's TrainerConfig has no optim.lrr"],
    ]);
  });

  test("an output dir that cannot be written fails", async () => {
    const dir = tempDir("ro");
    writeFileSync(join(dir, "file"), "x");
    const results = await preflightOf(
      await load(["--run.output_dir", JSON.stringify(join(dir, "file", "out"))]),
      {
        env: { ...process.env, PATH: fakePath() },
      },
    );
    expect(failed(results)[0]?.name).toBe("output dir writable");
  });

  test("a live process in an earlier run's pid file fails with the command that stops it", async () => {
    const config = await load();
    const other = join(config.runDir, "..", "earlier");
    const sleeper: ChildProcess = spawn("sleep", ["30"], { stdio: "ignore" });
    cleanup.push(() => sleeper.kill("SIGKILL"));
    const pid = sleeper.pid as number;
    writePidFile(other, {
      runName: "earlier",
      runDir: other,
      startedAt: new Date().toISOString(),
      launcher: { role: "launcher", pid, pgid: pid, startTime: readProc(pid)?.startTime ?? 0 },
      children: [],
    });
    const results = await preflightOf(config, { env: { ...process.env, PATH: fakePath() } });
    const bad = failed(results);
    expect(bad.map((r) => r.name)).toEqual(["no live run in output dir"]);
    expect(bad[0]?.message).toContain(`launcher pid ${pid}`);
    expect(bad[0]?.message).toContain(`clean ${join(config.runDir, "..")}`);
    sleeper.kill("SIGKILL");
  });

  test("external without a url leaves the policy's base_url alone", async () => {
    const results = await preflightOf(await load(["--inference.kind", "external"]), {
      env: { ...process.env, PATH: fakePath() },
    });
    expect(failed(results)).toEqual([]);
    expect(find(results, /external/)[0]?.status).toBe("skip");
  });

  test("an external server that does not answer fails", async () => {
    const results = await preflightOf(
      await load(["--inference.kind", "external", "--inference.url", "http://127.0.0.1:1/v1"]),
      { env: { ...process.env, PATH: fakePath() } },
    );
    expect(failed(results).map((r) => r.name)).toEqual(["external inference server answers"]);
  });

  test("a stand-in command relative to the TOML is found there; a missing one fails naming the key", async () => {
    const ok = await preflightOf(
      await load([
        "--inference.kind",
        '"prime-rl"',
        "--inference.command",
        // "../" past the root stays at "/": this resolves to /usr/bin/python3 from the fixture's temp dir.
        `["${"../".repeat(12)}usr/bin/python3"]`,
        "--trainer_process.kind",
        '"none"',
      ]),
      { env: { ...process.env, PATH: fakePath() } },
    );
    expect(find(ok, /inference program/)[0]?.status).toBe("ok");
    const missing = await preflightOf(
      await load(["--inference.kind", '"prime-rl"', "--inference.command", '["./no/such/inference"]']),
      { env: { ...process.env, PATH: fakePath() } },
    );
    expect(find(missing, /inference program/)[0]?.status).toBe("fail");
  }, 30_000);
});

describe("preflight: MLGym files and docker", () => {
  function mlgymRoot(tasks: string[]): string {
    const root = tempDir("mlgym");
    mkdirSync(join(root, "configs", "tasks"), { recursive: true });
    for (const t of tasks) writeFileSync(join(root, "configs", "tasks", `${t}.yaml`), `id: ${t}\n`);
    return root;
  }
  const mlgymArgs = (root: string, image = "air-mlgym-test:latest") => [
    "--env.plugin",
    "mlgym",
    "--env.mlgym_root",
    JSON.stringify(root),
    "--env.tasks",
    '["titanic", "prisonersDilemma"]',
    "--env.docker.image",
    JSON.stringify(image),
  ];
  const env = { ...process.env, PATH: fakePath() };

  test("the env's own checks run: a missing root or task file fails, naming the path", async () => {
    const missing = await preflightOf(await load(mlgymArgs("/nonexistent/MLGym")), { env });
    expect(find(missing, /MLGym root/)[0]?.message).toContain("/nonexistent/MLGym does not exist");
    const root = mlgymRoot(["titanic"]);
    const partial = await preflightOf(await load(mlgymArgs(root)), { env });
    const absent = find(partial, /^task prisonersDilemma$/)[0];
    expect(absent?.status).toBe("fail");
    expect(absent?.message).toContain(join(root, "configs", "tasks", "prisonersDilemma.yaml"));
  });

  test.skipIf(!dockerUp)("docker reachable and the image present, or how to build it", async () => {
    const root = mlgymRoot(["titanic", "prisonersDilemma"]);
    const present = await preflightOf(await load(mlgymArgs(root)), { env });
    // The stand-in task YAMLs are not loadable tasks (checkTasks says so); only docker's checks matter here.
    expect(failed(present).filter((r) => /docker|image/.test(r.name))).toEqual([]);
    expect(find(present, /docker reachable/)[0]?.status).toBe("ok");
    const absent = await preflightOf(await load(mlgymArgs(root, "air-no-such-image:never")), { env });
    expect(find(absent, /image air-no-such-image:never/)[0]?.message).toContain("bun run images:build");
  });

  test("an unreachable docker engine fails with how to start it", async () => {
    const root = mlgymRoot(["titanic", "prisonersDilemma"]);
    const saved = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = `unix://${join(root, "no-docker.sock")}`;
    try {
      const results = await preflightOf(await load(mlgymArgs(root)), { env });
      const docker = find(results, /^docker reachable$/)[0];
      expect(docker?.status).toBe("fail");
      expect(docker?.message).toContain("dockerd");
    } finally {
      if (saved === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved;
    }
  });
});
