import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@air/core/testing";
import { REPO_ROOT } from "@air/launcher/testing";
import { openaiPolicyConfig, probeServer } from "@air/policy-openai";
import { startTiny, TINY_SERVER_SCRIPT, type TinyProcess, tinyFiles, writeTinyConfig } from "@air/tiny";

/**
 * `rl check` sends prime-rl's admin calls (`/pause?mode=keep&clear_cache=false`, `/update_weights
 * {"weight_dir"}`, `/resume`) to the running server and names a mismatch. Against the tiny stand-ins: prime-rl's
 * server (`bin/inference`) passes; stock `vllm serve` (`bin/vllm`) fails naming the missing `/pause`, and with
 * VLLM_SERVER_DEV_MODE, where vLLM mounts its own `/update_weights` that wants `update_info`, fails naming that.
 */
const VLLM = join(REPO_ROOT, "packages", "tiny", "bin", "vllm");
const dir = mkdtempSync(join(tmpdir(), "air-probe-admin-"));
const MODEL = "served-name";
let primeRl: TinyProcess;
const vllm: Bun.Subprocess[] = [];

async function startVllm(env: Record<string, string>): Promise<string> {
  const file = join(dir, `vllm-${vllm.length}.json`);
  writeTinyConfig(file, { port: 0, commands: ["ls", "validate"], seed: 2 });
  const argv = [VLLM, "serve", tinyFiles(file).modelDir, "--host", "127.0.0.1", "--port", "0"];
  argv.push("--served-model-name", MODEL);
  const proc = Bun.spawn(argv, { stdout: "pipe", stderr: "ignore", env: { ...process.env, ...env } });
  vllm.push(proc);
  const reader = proc.stdout.getReader();
  const first = await Promise.race([reader.read(), Bun.sleep(60_000).then(() => undefined)]);
  reader.releaseLock();
  if (first === undefined || first.done) throw new Error("bin/vllm did not start");
  const line = new TextDecoder().decode(first.value).split("\n")[0] ?? "";
  return `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}/v1`;
}

beforeAll(async () => {
  const file = join(dir, "tiny.json");
  const port = await freePort();
  writeTinyConfig(file, { port, commands: ["ls", "validate", "submit"], seed: 1, model_name: MODEL });
  primeRl = await startTiny(TINY_SERVER_SCRIPT, file, 60_000);
}, 120_000);

afterAll(async () => {
  await primeRl?.stop();
  for (const p of vllm) p.kill("SIGTERM");
  await Promise.all(vllm.map((p) => p.exited));
  rmSync(dir, { recursive: true, force: true });
});

const ADMIN = "inference admin routes take prime-rl's payload";
const adminResult = async (baseUrl: string, weightUpdate: "full" | "lora" = "full") => {
  const extra = weightUpdate === "lora" ? { lora_name: "air" } : {};
  const config = openaiPolicyConfig.parse({ base_url: baseUrl, weight_update: weightUpdate, ...extra });
  const results = await probeServer(config, { modelName: MODEL }, 60_000);
  expect(results[0]?.status).toBe("ok");
  return results.find((r) => r.name === ADMIN);
};

describe("rl check: the admin routes with prime-rl's payload", () => {
  test("prime-rl's server (tiny stand-in) takes them", async () => {
    const result = await adminResult(`http://127.0.0.1:${primeRl.ready.port}/v1`);
    expect(result?.status).toBe("ok");
    expect(result?.message).toContain(
      '/pause, /update_weights {"weight_dir"}, /resume answered as prime-rl\'s server',
    );
    // The probe left it serving (resumed): a generation still answers.
    expect((await adminResult(`http://127.0.0.1:${primeRl.ready.port}/v1`))?.status).toBe("ok");
  }, 120_000);

  test("stock vllm serve: no /pause; with VLLM_SERVER_DEV_MODE its own /update_weights wants update_info", async () => {
    const plain = await adminResult(await startVllm({}));
    expect(plain?.status).toBe("fail");
    expect(plain?.message).toContain("POST /pause answered 404");
    const dev = await adminResult(await startVllm({ VLLM_SERVER_DEV_MODE: "1" }));
    expect(dev?.status).toBe("fail");
    expect(dev?.message).toContain("POST /update_weights answered 400");
    expect(dev?.message).toContain("Missing 'update_info' in request body");
    expect(dev?.message).toContain("stock vLLM's own /update_weights");
  }, 120_000);

  test("LoRA weights do not use these routes: no admin probe", async () => {
    expect(await adminResult(`http://127.0.0.1:${primeRl.ready.port}/v1`, "lora")).toBeUndefined();
  }, 60_000);
});
