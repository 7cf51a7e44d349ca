import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@air/core/testing";
import { openaiPolicyConfig, probeServer } from "@air/policy-openai";
import { startTiny, TINY_SERVER_SCRIPT, type TinyProcess, writeTinyConfig } from "@air/tiny";

/**
 * The preflight probe asks the server for the model the run's requests name (`[policy] model`, else `[model]
 * name`), against a real tiny server that answers 404 for a model it does not serve, as vLLM does. (It asked for
 * "default", which every real vLLM refuses: `configs/dataset/distributed.toml` failed its preflight.)
 */
const dir = mkdtempSync(join(tmpdir(), "air-probe-model-"));
let server: TinyProcess;
let baseUrl = "";

beforeAll(async () => {
  const file = join(dir, "tiny.json");
  const port = await freePort();
  writeTinyConfig(file, { port, commands: ["ls", "validate", "submit"], seed: 1, model_name: "served-name" });
  server = await startTiny(TINY_SERVER_SCRIPT, file, 60_000);
  baseUrl = `http://127.0.0.1:${port}/v1`;
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("preflight probe: the model name", () => {
  test("[model] name when the policy names none; [policy] model over it; another name fails naming it", async () => {
    const config = openaiPolicyConfig.parse({ base_url: baseUrl });
    const [ok] = await probeServer(config, { modelName: "served-name" });
    expect(ok?.status).toBe("ok");
    const [wrong] = await probeServer(config, { modelName: "Qwen/Qwen3-4B" });
    expect(wrong?.status).toBe("fail");
    expect(wrong?.message).toContain("The model `Qwen/Qwen3-4B` does not exist.");
    const named = openaiPolicyConfig.parse({ base_url: baseUrl, model: "served-name" });
    expect((await probeServer(named, { modelName: "Qwen/Qwen3-4B" }))[0]?.status).toBe("ok");
  });
});
