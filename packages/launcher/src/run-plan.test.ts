import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { loadConfig, parseOverrides } from "@air/core";
import { builtinRegistry } from "./builtins.ts";
import { resolveConfig } from "./cli.ts";
import { planOf, planRun } from "./run-plan.ts";
import { LAUNCHER_SECTIONS, type RunConfig } from "./sections.ts";
import { fakePath, preflightOf, REPO_ROOT, removeTempDirs, writeFixtureConfig } from "./test-helpers.ts";

afterAll(removeTempDirs);

const DEFAULT = join(REPO_ROOT, "configs", "dataset", "default.toml");

/** The plain values of a config (its plugin sections and the launcher's), to compare before and after. */
function values(config: RunConfig): string {
  const p = config.plugins;
  const plugins = [p.env, p.policy, p.trainer, p.advantage, p.strategy, ...p.rewards, ...p.loggers];
  return JSON.stringify({ root: config.root, plugins: plugins.map((x) => [x.spec, x.config]) });
}

test("the plan derives values into a new config and leaves the loaded one as it was", async () => {
  const overrides = parseOverrides(["--inference.router", "true"]);
  const loaded = await loadConfig(DEFAULT, {
    registry: builtinRegistry(),
    overrides,
    extraSections: LAUNCHER_SECTIONS,
  });
  const before = values(loaded);
  const plan = planRun(loaded);
  expect(values(loaded)).toBe(before);
  expect(plan.problems).toEqual([]);
  expect(plan.config).not.toBe(loaded);
  expect(plan.config.plugins.trainer.config).toMatchObject({
    data_world_size: 1,
    pad_to_multiple_of: 1,
    cp: 1,
  });
  expect(loaded.plugins.trainer.config).not.toHaveProperty("data_world_size");
  expect(plan.config.plugins.policy.config).toMatchObject({ admin_url: "http://127.0.0.1:8100/v1" });
  expect(loaded.plugins.policy.config).not.toHaveProperty("admin_url");
  expect(plan.urls).toEqual({ inference: "http://127.0.0.1:8000", engine: "http://127.0.0.1:8100" });
  expect(plan.trainer?.ctx.trainerProcess.kind).toBe("prime-rl");
  expect(plan.inference?.ctx.weightUpdate).toBe("full");
  expect(Object.isFrozen(plan)).toBe(true);
});

test("the plugins' needs are asked once: validate plans, preflight reads that plan", async () => {
  const fx = await writeFixtureConfig();
  const config = await resolveConfig(fx.file, []);
  const plan = planOf(config);
  expect(planOf(config)).toBe(plan);
  expect(plan.config).toBe(config);
  let asked = 0;
  const env = config.plugins.env;
  const needs = env.definition.launch?.needs;
  const counted: RunConfig = {
    ...config,
    plugins: {
      ...config.plugins,
      env: {
        ...env,
        definition: {
          ...env.definition,
          launch: {
            ...env.definition.launch,
            needs: (c, ctx) => {
              asked++;
              return needs?.(c, ctx) ?? {};
            },
          },
        },
      },
    },
  };
  const counting = planOf(counted);
  expect(asked).toBe(1);
  await preflightOf(counting.config, { env: { ...process.env, PATH: fakePath() } });
  await preflightOf(counting.config, { env: { ...process.env, PATH: fakePath() } });
  expect(asked).toBe(1);
});

test("the plan holds the ports, this machine's part and the loggers the orchestrator runs", async () => {
  const fx = await writeFixtureConfig({ loggers: '[{ plugin = "console" }, { plugin = "jsonl" }]' });
  const plan = planOf(await resolveConfig(fx.file, []));
  const { inference, trainer_process: tp } = plan.config.root;
  expect(plan.ports).toEqual([
    { what: "inference", host: inference.host, port: fx.port },
    { what: "trainer rendezvous", host: tp.master_addr, port: tp.master_port },
  ]);
  expect(plan.worker).toBe(false);
  expect(plan.stateDir).toBe(fx.runDir);
  expect(plan.usesDocker).toBe(false);
  // the console logger prints step lines itself: the launcher's own step lines stand in for it
  expect(plan.loggers.map((l) => l.spec)).toEqual(["jsonl"]);

  const worker = planOf(
    await resolveConfig(fx.file, ["--trainer_process.nnodes", "2", "--trainer_process.node_rank", "1"]),
  );
  expect(worker.worker).toBe(true);
  expect(worker.stateDir).toBe(join(fx.runDir, "nodes", "node_1"));
  expect(worker.ports).toEqual([]);
  const external = planOf(
    await resolveConfig(fx.file, ["--inference.kind", "external", "--inference.url", "http://h:9/v1"]),
  );
  expect(external.ports.map((p) => p.what)).toEqual(["trainer rendezvous"]);
  expect(external.urls.inference).toBe("http://h:9");
});
