import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { primeRlSettings as settings } from "@air/trainer-prime-rl";
import { resolveConfig } from "./cli.ts";
import { processContext } from "./process-kinds.ts";
import { REPO_ROOT, RL_ENTRY } from "./test-helpers.ts";

type Config = Parameters<typeof processContext>[0];
const primeRlSettings = (c: Config) => settings(processContext(c));

const shipped = (name: string) => join(REPO_ROOT, "configs", name);

async function problems(file: string, overrides: string[]): Promise<string> {
  try {
    await resolveConfig(file, overrides);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${file} ${overrides.join(" ")} was accepted`);
}

describe("[trainer] data_world_size is derived as prime-rl's rl derives num_train_workers", () => {
  test.each([
    ["mlgym/rl.toml", 5],
    ["mlgym/rl_debug.toml", 5],
    ["mlgym/multi-host.toml", 5],
    ["dataset/default.toml", 1],
    ["dataset/full.toml", 6],
    ["dataset/distributed.toml", 8],
  ])("%s: one micro-batch list per trainer rank (%d)", async (name, ranks) => {
    const settings = primeRlSettings(await resolveConfig(shipped(name), []));
    expect(settings.data_world_size).toBe(ranks);
    expect(settings.pad_to_multiple_of).toBe(1);
  });

  test("context parallelism divides the ranks; nodes multiply them; entrypoint is one rank", async () => {
    const file = shipped("dataset/distributed.toml");
    const cp = await resolveConfig(file, ["--trainer_process.trainer_config.model.cp", "2"]);
    expect(primeRlSettings(cp).data_world_size).toBe(4);
    expect(primeRlSettings(cp).pad_to_multiple_of).toBe(2);
    const nodes = await resolveConfig(file, [
      "--trainer_process.nnodes",
      "2",
      "--trainer_process.master_addr",
      "10.0.0.5",
    ]);
    expect(primeRlSettings(nodes).data_world_size).toBe(16);
    expect(primeRlSettings(nodes).zmq_host).toBe("10.0.0.5");
    const one = await resolveConfig(file, ["--trainer_process.launch", "entrypoint"]);
    expect(primeRlSettings(one).data_world_size).toBe(1);
  });

  test("an explicit value that agrees is kept; one that contradicts names both keys", async () => {
    const file = shipped("dataset/full.toml");
    const same = await resolveConfig(file, ["--trainer.data_world_size", "6"]);
    expect(primeRlSettings(same).data_world_size).toBe(6);
    const message = await problems(file, ["--trainer.data_world_size", "1"]);
    expect(message).toContain("trainer.data_world_size = 1 contradicts 6");
    expect(message).toContain("deployment.trainer_gpu_ids");
    expect(message).toContain("trainer_process.nnodes");
  });

  test("ranks, nodes and transport that cannot work together are refused, naming the keys", async () => {
    const file = shipped("dataset/full.toml");
    expect(await problems(file, ["--trainer_process.trainer_config.model.cp", "4"])).toContain(
      "trainer_process.trainer_config.model.cp = 4 must divide",
    );
    expect(
      await problems(file, ["--trainer_process.launch", "entrypoint", "--trainer_process.nnodes", "2"]),
    ).toContain("trainer_process.launch");
    const zmq = await problems(file, [
      "--trainer.transport",
      "zmq",
      "--trainer.zmq_host",
      "localhost",
      "--trainer_process.nnodes",
      "2",
      "--trainer_process.master_addr",
      "10.0.0.5",
    ]);
    expect(zmq).toContain('trainer.zmq_host = "localhost" contradicts "10.0.0.5"');
    expect(zmq).toContain("trainer_process.master_addr");
  });

  test("rl validate exits 2 on a contradicting data_world_size and prints the derived one", () => {
    const run = (args: string[]) =>
      spawnSync("bun", [RL_ENTRY, "validate", shipped("dataset/full.toml"), ...args], { encoding: "utf8" });
    const bad = run(["--trainer.data_world_size", "2"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("trainer.data_world_size = 2 contradicts 6");
    const good = run([]);
    expect(good.status).toBe(0);
    expect(JSON.parse(good.stdout).plugins.trainer.config.data_world_size).toBe(6);
  }, 60_000);
});

test("--trainer.prime_rl_version 0.8 on the command line (a number) is the version the user typed", async () => {
  const file = shipped("dataset/default.toml");
  expect(
    primeRlSettings(await resolveConfig(file, ["--trainer.prime_rl_version", "0.8"])).prime_rl_version,
  ).toBe("0.8");
  expect(
    primeRlSettings(await resolveConfig(file, ["--trainer.prime_rl_version=0.9"])).prime_rl_version,
  ).toBe("0.9");
  await expect(resolveConfig(file, ["--trainer.prime_rl_version", "0.7"])).rejects.toThrow(
    /trainer.prime_rl_version/,
  );
});

test("inference GPUs that tensor parallelism cannot split are refused, naming both keys", async () => {
  const file = shipped("dataset/full.toml");
  await expect(resolveConfig(file, ["--inference.tensor_parallel_size", "2"])).resolves.toBeDefined();
  await expect(resolveConfig(file, ["--inference.tensor_parallel_size", "4"])).rejects.toThrow(
    /inference.tensor_parallel_size = 4 must divide the 2 inference GPU\(s\) of deployment.inference_gpu_ids/,
  );
});
