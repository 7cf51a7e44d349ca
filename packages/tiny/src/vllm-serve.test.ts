import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { TINY_PY_DIR, TINY_PYTHON, tinyFiles, writeTinyConfig } from "./scripts.ts";

// bin/vllm is the drop-in for stock `vllm serve` (the launcher's [inference] kind = "vllm" argv): it serves what
// vLLM serves, and not prime-rl's admin routes, so a run that would need them fails here as it would on vLLM.
const VLLM = join(import.meta.dir, "..", "bin", "vllm");
const dir = mkdtempSync(join(tmpdir(), "air-tiny-vllm-"));
const procs: Subprocess[] = [];
afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await Promise.all(procs.map((p) => p.exited));
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

async function start(extra: string[], env: Record<string, string> = {}): Promise<string> {
  const file = join(dir, `c${procs.length}.json`);
  writeTinyConfig(file, { port: 0, commands: ["ls", "validate"], seed: 2 });
  const argv = [VLLM, "serve", tinyFiles(file).modelDir, "--host", "127.0.0.1", "--port", "0", "--seed", "2"];
  argv.push("--gpu-memory-utilization", "0.9", "--tensor-parallel-size", "1", ...extra);
  argv.push("--logprobs-mode", "processed_logprobs");
  const proc = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  procs.push(proc);
  const reader = proc.stdout.getReader();
  let text = "";
  const line = (async () => {
    while (!text.includes("\n")) {
      const chunk = await reader.read();
      if (chunk.done) throw new Error(`bin/vllm exited: ${await new Response(proc.stderr).text()}`);
      text += new TextDecoder().decode(chunk.value);
    }
    return text.split("\n")[0] as string;
  })();
  const first = await Promise.race([line, Bun.sleep(60_000).then(() => "timeout")]);
  expect(first).not.toBe("timeout");
  return `http://127.0.0.1:${(JSON.parse(first) as { port: number }).port}`;
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) });

test("stock vllm serve: OpenAI routes, no prime-rl admin routes, runtime LoRA only when vLLM allows it", async () => {
  const base = await start(["--enable-lora", "--max-lora-rank", "32", "--max-loras", "2"], {
    VLLM_ALLOW_RUNTIME_LORA_UPDATING: "True",
  });
  expect((await fetch(`${base}/health`)).status).toBe(200);
  const chat = await post(`${base}/v1/chat/completions`, {
    messages: [{ role: "user", content: "hi" }],
    logprobs: true,
  });
  expect(chat.status).toBe(200);
  for (const path of ["/pause", "/resume", "/update_weights", "/load_lora_adapter"])
    expect((await post(`${base}${path}`, { weight_dir: dir })).status, path).toBe(404);
  expect((await fetch(`${base}/liveness`)).status).toBe(404);
  // Runtime LoRA: load v1 (a fresh PEFT adapter, as the trainer broadcasts one), then unload it.
  const weights = join(dir, "adapter");
  const save = Bun.spawnSync(
    [
      TINY_PYTHON,
      "-c",
      "import sys; from air_tiny import lora, model as tm\nm = tm.build_model(tm.load_model_config(sys.argv[1]))\n" +
        "c = {**lora.LORA_DEFAULTS, 'rank': 8}\nlora.apply_lora(m, c)\nlora.save_adapter(m, sys.argv[2], c, sys.argv[1])",
      tinyFiles(join(dir, "c0.json")).modelDir,
      weights,
    ],
    { env: { ...process.env, PYTHONPATH: TINY_PY_DIR }, stderr: "pipe" },
  );
  expect(save.exitCode, save.stderr.toString()).toBe(0);
  expect(
    (await post(`${base}/v1/load_lora_adapter`, { lora_name: "air-lora-v1", lora_path: weights })).status,
  ).toBe(200);
  const models = (await (await fetch(`${base}/v1/models`)).json()) as { data: Array<{ id: string }> };
  expect(models.data.map((m) => m.id)).toContain("air-lora-v1");
  expect((await post(`${base}/v1/unload_lora_adapter`, { lora_name: "air-lora-v1" })).status).toBe(200);
  expect((await post(`${base}/v1/unload_lora_adapter`, { lora_name: "air-lora-v1" })).status).toBe(404);

  const locked = await start(["--enable-lora"]);
  expect((await post(`${locked}/v1/load_lora_adapter`, { lora_name: "a", lora_path: weights })).status).toBe(
    404,
  );
}, 180_000);

test("bad argv is refused with a message", () => {
  const r = Bun.spawnSync([VLLM, "bench"], { stderr: "pipe" });
  expect(r.exitCode).not.toBe(0);
  expect(r.stderr.toString()).toContain("serve");
});
