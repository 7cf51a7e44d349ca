/**
 * A real non-own inference server: Debian's llama.cpp `llama-server` (image from scripts/build-llama-image)
 * serving a tiny random GGUF written by the project's own generator, driven through `bun run eval` and
 * `bun run rl` (trainer none). Skipped only when the image is missing outside CI; under CI=true it must run.
 */

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..", "..", "..");
const IMAGE = process.env.AIR_LLAMA_IMAGE ?? "air-llama:latest";
const GGUF = join(ROOT, "packages", "policy-openai", "src", "llama", "gguf.ts");
const DATA = join(ROOT, "data", "dataset", "algebra-mc");

/** Runs a command to its end without blocking this process (the test's own 500 server must keep answering). */
async function run(argv: string[], timeoutMs = 120_000): Promise<{ code: number; out: string }> {
  const p = Bun.spawn(argv, { cwd: ROOT, stdout: "pipe", stderr: "pipe", timeout: timeoutMs });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, out: `${stdout}${stderr}` };
}

function runSync(argv: string[]): number {
  return Bun.spawnSync(argv, { stdout: "ignore", stderr: "ignore", timeout: 30_000 }).exitCode ?? -1;
}

const imagePresent = runSync(["docker", "image", "inspect", IMAGE]) === 0;
if (!imagePresent && process.env.CI === "true") {
  throw new Error(`${IMAGE} is missing under CI: .ci/run must build it (bash scripts/build-llama-image)`);
}

let dir = "";
let container = "";
let baseUrl = "";
let broken: ReturnType<typeof Bun.serve> | undefined;
let splitting: ReturnType<typeof Bun.serve> | undefined;

/** A TOML run config against `url`: the dataset env, the openai policy, trainer none. */
function config(name: string, url: string, extra: { systemPrompt?: string; policy?: string } = {}): string {
  const file = join(dir, `${name}.toml`);
  writeFileSync(
    file,
    `[run]
name = "${name}"
output_dir = "${join(dir, "out")}"
max_steps = 2

[model]
name = "tiny"

[orchestrator]
batch_size = 8
rollouts_per_example = 4
max_concurrent_rollouts = 8
max_turns = 1

[env]
plugin = "dataset"
file = "${join(DATA, "train.jsonl")}"
eval_file = "${join(DATA, "eval.jsonl")}"
num_train_examples = 8
num_eval_examples = 2
answer_field = "correct"
task_field = "task"
system_prompt = "${extra.systemPrompt ?? "Solve the problem. End with: The answer is (X)."}"
prompt_template = "{question}\\n{options|choices}"

[eval]
samples_per_example = 2
k = [1, 2]

[policy]
plugin = "openai"
base_url = "${url}"
parser = "none"
max_tokens = 24
retry_backoff_ms = 20
${extra.policy ?? ""}

[[reward]]
plugin = "mc-letter"

[trainer]
plugin = "none"

[[logger]]
plugin = "console"

[[logger]]
plugin = "sqlite"
`,
  );
  return file;
}

function query<T>(name: string, sql: string): T[] {
  const db = new Database(join(dir, "out", name, "air.db"), { readonly: true });
  try {
    return db.query(sql).all() as T[];
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  if (!imagePresent) return;
  dir = mkdtempSync(join(tmpdir(), "air-llama-"));
  const gguf = await run(["bun", GGUF, join(dir, "tiny.gguf")]);
  if (gguf.code !== 0) throw new Error(`gguf generator failed: ${gguf.out}`);
  container = `air-llama-test-${process.pid}`;
  const started = await run([
    "docker",
    "run",
    "-d",
    "--rm",
    "--name",
    container,
    "-p",
    "127.0.0.1::8080",
    "-v",
    `${dir}:/models:ro`,
    IMAGE,
    "llama-server",
    "-m",
    "/models/tiny.gguf",
    "--host",
    "0.0.0.0",
    "--port",
    "8080",
    "-c",
    "4096",
    "-np",
    "4",
    "-t",
    "1",
  ]);
  if (started.code !== 0) throw new Error(`docker run failed: ${started.out}`);
  const port = (await run(["docker", "port", container, "8080/tcp"])).out.trim().split(":").pop();
  baseUrl = `http://127.0.0.1:${port}/v1`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/health`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) {
      throw new Error(`llama-server did not answer: ${(await run(["docker", "logs", container])).out}`);
    }
    await Bun.sleep(200);
  }
  const upstream = `http://127.0.0.1:${port}`;
  // The same server, except that generations answer 500 (a server that broke).
  // The same server, except that /completion samples the byte tokens <0xC3> (200) and <0xA9> (174) often: "é"
  // split across two tokens, whose first llama.cpp reports no logprob entry for (the entries merge).
  splitting = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (req) => {
      const url = new URL(req.url);
      let body = req.method === "GET" ? undefined : await req.text();
      if (url.pathname === "/completion" && body)
        body = JSON.stringify({
          ...JSON.parse(body),
          logit_bias: [
            [200, 16],
            [174, 16],
          ],
        });
      return await fetch(`${upstream}${url.pathname}${url.search}`, {
        method: req.method,
        headers: req.headers,
        body,
      });
    },
  });
  broken = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (req) => {
      const url = new URL(req.url);
      // both generation routes: chat (evaluation) and the native /completion (training: exact token ids)
      if (url.pathname === "/v1/chat/completions" || url.pathname === "/completion")
        return new Response("internal error", { status: 500 });
      return await fetch(`${upstream}${url.pathname}${url.search}`, {
        method: req.method,
        headers: req.headers,
        body: req.method === "GET" ? undefined : await req.text(),
      });
    },
  });
}, 90_000);

afterAll(() => {
  broken?.stop(true);
  splitting?.stop(true);
  if (container) runSync(["docker", "rm", "-f", container]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!imagePresent)("llama.cpp llama-server (Debian llama.cpp-tools, tiny random GGUF)", () => {
  test("bun run eval evaluates every rollout", async () => {
    const { code, out } = await run(["bun", "run", "eval", config("eval", baseUrl)]);
    expect(out).toContain('server: llama.cpp (GET /v1/models owned_by "llamacpp")');
    expect(out).toMatch(/overall\s+2\s+4\s+0\s/);
    expect(out).toContain("evaluation completed: rollouts 4 ok / 0 failed");
    expect(code).toBe(0);
  }, 120_000);

  test("bun run rl (trainer none): 2 steps, token data in every turn, samples built and none trained", async () => {
    const { code, out } = await run(["bun", "run", "rl", config("rl", baseUrl)]);
    expect(out).toContain(
      "run completed: 2 step(s), rollouts 16 ok / 0 failed, 16 sample(s) built, none trained (the trainer returned no weights)",
    );
    expect(code).toBe(0);
    const turns = query<{ prompt: number; completion: number; usage: number }>(
      "rl",
      "select prompt_tokens as prompt, completion_tokens as completion from trajectories",
    );
    expect(turns).toHaveLength(16);
    for (const t of turns) {
      expect(t.prompt).toBeGreaterThan(20);
      expect(t.completion).toBeGreaterThan(0);
    }
    const samples = query<{ n: number }>("rl", "select count(*) as n from samples")[0]?.n ?? 0;
    expect(samples).toBeGreaterThan(0);
  }, 120_000);

  test("rl check sends one tiny generation and reports the token data", async () => {
    const { out } = await run(["bun", "run", "rl", "check", config("check", baseUrl)]);
    expect(out).toMatch(
      /ok {3}policy server returns training data: llama\.cpp .*prompt ids, \d+ completion ids with logprobs/,
    );
  }, 60_000);

  test("tokens that split a UTF-8 character: exact ids from /completion; such tokens are masked and counted, the rest trains", async () => {
    const url = `http://127.0.0.1:${splitting?.port}/v1`;
    const check = await run(["bun", "run", "rl", "check", config("split-check", url)]);
    expect(check.out).toMatch(
      /ok {3}policy server returns training data: llama\.cpp .*completion ids with logprobs/,
    );
    expect(check.code).toBe(0);
    const { code, out } = await run([
      "bun",
      "run",
      "rl",
      config("split", url),
      "--orchestrator.rollout_retries=0",
    ]);
    expect(out).toContain("rollouts 16 ok / 0 failed");
    expect(code).toBe(0);
    const metric = (name: string) =>
      query<{ v: number }>("split", `select sum(value) as v from metrics where name = '${name}'`)[0]?.v ?? 0;
    // llama.cpp left out some logprob entries: those tokens are counted by the policy and masked in the samples.
    const withoutLogprob = metric("strategy/tokens_without_logprob");
    expect(withoutLogprob).toBeGreaterThan(0);
    expect(metric("openai/tokensWithoutLogprob")).toBe(withoutLogprob);
    const samples = query<{ n: number }>("split", "select count(*) as n from samples")[0]?.n ?? 0;
    expect(samples).toBeGreaterThan(0);
  }, 120_000);

  test("a prompt longer than the server's context ends each rollout as context_length", async () => {
    // max_model_len far above the server's window: the request is sent and llama.cpp's own 400
    // exceed_context_size_error is what ends the rollout.
    const file = config("ctx", baseUrl, {
      systemPrompt: "pad ".repeat(600),
      policy: "max_model_len = 100000",
    });
    const { out } = await run(["bun", "run", "rl", file]);
    expect(out).toContain("rollouts 16 ok / 0 failed");
    const reasons = query<{ reason: string; n: number }>(
      "ctx",
      "select stop_reason as reason, count(*) as n from trajectories group by 1",
    );
    expect(reasons).toEqual([{ reason: "context_length", n: 16 }]);
  }, 120_000);

  test("bun run eval against a server answering 500 exits 1", async () => {
    const url = `http://127.0.0.1:${broken?.port}/v1`;
    const file = config("eval500", url, { policy: "max_retries = 0" });
    const { code, out } = await run(["bun", "run", "eval", file, "--orchestrator.rollout_retries=0"]);
    expect(out).toContain("evaluation failed: rollouts 0 ok / 4 failed (every rollout failed");
    expect(code).toBe(1);
  }, 120_000);

  test("a server answering 500 fails the run with exit 1 and names the cause", async () => {
    const url = `http://127.0.0.1:${broken?.port}/v1`;
    const { code, out } = await run([
      "bun",
      "run",
      "rl",
      config("e500", url, { policy: "max_retries = 1" }),
      "--run.max_steps=4",
      "--orchestrator.max_failed_steps=2",
      "--orchestrator.rollout_retries=0",
    ]);
    expect(code).toBe(1);
    expect(out).toContain("every rollout failed in 2 step(s) in a row (orchestrator.max_failed_steps = 2)");
    // training takes llama.cpp's exact token ids from its native /completion
    expect(out).toMatch(
      /completion failed: http:\/\/127\.0\.0\.1:\d+\/completion answered 500: internal error/,
    );
    expect(out).toMatch(/run failed: \d step\(s\), rollouts 0 ok \/ \d+ failed, 0 sample\(s\) trained/);
  }, 120_000);
});
