import { Database } from "bun:sqlite";
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  freePort,
  killSurvivors,
  type LauncherRun,
  REPO_ROOT,
  startLauncher,
  survivors,
} from "@air/launcher/testing";

/**
 * SGLang + LoRA with the SGLang-mode stand-in (`packages/tiny/bin/sglang`, started by hand with SGLang's argv, as a
 * user starts SGLang; `[inference] kind = "external"`): the trainer trains an adapter, the policy loads each
 * broadcast with SGLang's `/load_lora_adapter` and asks for it as `<served model>:<adapter>`. The stand-in selects
 * adapters only that way and answers a bare adapter name 404 as SGLang does, so a policy that sent the bare name
 * (what air did before) fails the run. Served logprobs follow the adapter: after the run the trained adapter and
 * the base give different logprobs, and the trainer's logprobs equal the server's at every step (mismatch ≈ 0),
 * which they would not if the server sampled from the base while the trainer trained the adapter.
 */
const SGLANG = join(REPO_ROOT, "packages", "tiny", "bin", "sglang");
const CONFIG = join(REPO_ROOT, "configs", "quickstart.toml");
const SERVED = "tiny-sglang";
const STEPS = 3;
const RUN_MS = 300_000;

let current: { run?: LauncherRun; runDir?: string; out?: string; server?: Bun.Subprocess } = {};
afterEach(async () => {
  if (current.runDir) killSurvivors(current.run, current.runDir);
  current.server?.kill("SIGTERM");
  await current.server?.exited;
  if (current.out) rmSync(current.out, { recursive: true, force: true });
  current = {};
});

async function startSglang(port: number, log: string): Promise<Bun.Subprocess> {
  const model = join(REPO_ROOT, "configs", "models", "quickstart");
  const argv = [SGLANG, "--model-path", model, "--served-model-name", SERVED, "--host", "127.0.0.1"];
  argv.push("--port", String(port), "--random-seed", "1", "--enable-lora", "--max-lora-rank", "16");
  argv.push("--mem-fraction-static", "0.8", "--tp", "1");
  const proc = Bun.spawn(argv, { stdout: "pipe", stderr: Bun.file(log) });
  const reader = proc.stdout.getReader();
  const first = await Promise.race([reader.read(), Bun.sleep(60_000).then(() => undefined)]);
  reader.releaseLock();
  if (first === undefined || first.done)
    throw new Error(`bin/sglang did not start: ${readFileSync(log, "utf8")}`);
  return proc;
}

async function chat(url: string, model: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({
      model,
      messages: [{ role: "user", content: "ls" }],
      logprobs: true,
      top_logprobs: 20,
      seed: 1,
      return_token_ids: true,
    }),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Every head token's logprob in the first position of the answer (top_logprobs), in a fixed order. */
function firstLogprobs(body: Record<string, unknown>): number[] {
  type Entry = { top_logprobs: Array<{ token: string; logprob: number }> };
  const choice = (body.choices as Array<{ logprobs: { content: Entry[] } }>)[0];
  return (choice?.logprobs.content[0]?.top_logprobs ?? [])
    .toSorted((a, b) => a.token.localeCompare(b.token))
    .map((t) => t.logprob);
}

test(
  "SGLang mode with LoRA: the run trains the adapter it serves; a bare adapter name is refused",
  async () => {
    const out = mkdtempSync(join(tmpdir(), "air-sglang-lora-"));
    const runDir = join(out, "quickstart");
    current = { out, runDir };
    const port = await freePort();
    const log = join(out, "sglang.log");
    current.server = await startSglang(port, log);
    const url = `http://127.0.0.1:${port}`;
    const run = startLauncher(
      [
        CONFIG,
        `--run.output_dir="${out}"`,
        `--run.max_steps=${STEPS}`,
        `--inference.kind="external"`,
        `--inference.url="${url}"`,
        `--policy.base_url="${url}/v1"`,
        `--policy.server="sglang"`,
        `--policy.model="${SERVED}"`,
        `--policy.weight_update="lora"`,
        `--policy.lora_name="air-lora"`,
        "--trainer.lora=true",
      ],
      { cwd: out, timeoutMs: RUN_MS },
    );
    current.run = run;
    const code = await run.done;
    if (code !== 0) throw new Error(`launcher exited ${code}:\n${run.stderr().slice(-4000)}`);

    const db = new Database(join(runDir, "air.db"), { readonly: true });
    const series = (name: string) =>
      (
        db.query("SELECT value FROM metrics WHERE name = ? ORDER BY step").all(name) as Array<{
          value: number;
        }>
      ).map((r) => r.value);
    const trained = series("trainer/progress/samples");
    const mismatch = series("trainer/mismatch");
    const versions = (
      db.query("SELECT policy_version AS v FROM steps ORDER BY step").all() as Array<{ v: number }>
    ).map((r) => r.v);
    db.close();
    expect(trained).toHaveLength(STEPS);
    for (const n of trained) expect(n).toBeGreaterThan(0);
    // Rollouts after the first step were generated with a loaded adapter version, and the trainer's logprobs of the
    // adapter equal the server's: the server sampled from the adapter the trainer trained.
    expect(Math.max(...versions)).toBeGreaterThan(0);
    expect(mismatch).toHaveLength(STEPS);
    for (const m of mismatch) expect(Math.abs(m)).toBeLessThan(1e-6);

    // The newest adapter the policy loaded (the server's log line), asked for as SGLang selects it, and bare.
    const loaded = [...readFileSync(log, "utf8").matchAll(/Loaded new LoRA adapter: name '([^']+)'/g)].map(
      (m) => m[1],
    );
    expect(loaded.length).toBeGreaterThanOrEqual(STEPS - 1);
    const adapter = loaded.at(-1) ?? "";
    const selected = await chat(url, `${SERVED}:${adapter}`);
    expect(selected.status).toBe(200);
    const base = await chat(url, SERVED);
    expect(base.status).toBe(200);
    const a = firstLogprobs(selected.body);
    const b = firstLogprobs(base.body);
    expect(a.length).toBeGreaterThan(1);
    expect(a.some((lp, i) => Math.abs(lp - (b[i] ?? lp)) > 1e-9)).toBe(true);
    const bare = await chat(url, adapter);
    expect(bare.status).toBe(404);
    expect(bare.body).toEqual({
      error: {
        object: "error",
        message: `Model '${adapter}' is not served.`,
        type: "NotFound",
        param: null,
        code: 404,
      },
    });
    expect(survivors(run, runDir)).toEqual([]);
  },
  RUN_MS + 60_000,
);

test(
  "SGLang mode with full weights: each step's weights arrive through /update_weights_from_disk",
  async () => {
    const out = mkdtempSync(join(tmpdir(), "air-sglang-full-"));
    const runDir = join(out, "quickstart");
    current = { out, runDir };
    const port = await freePort();
    current.server = await startSglang(port, join(out, "sglang.log"));
    const url = `http://127.0.0.1:${port}`;
    const base = await chat(url, SERVED);
    const run = startLauncher(
      [
        CONFIG,
        `--run.output_dir="${out}"`,
        `--run.max_steps=${STEPS}`,
        `--inference.kind="external"`,
        `--inference.url="${url}"`,
        `--policy.base_url="${url}/v1"`,
        `--policy.server="sglang"`,
        `--policy.model="${SERVED}"`,
      ],
      { cwd: out, timeoutMs: RUN_MS },
    );
    current.run = run;
    const code = await run.done;
    if (code !== 0) throw new Error(`launcher exited ${code}:\n${run.stderr().slice(-4000)}`);
    const db = new Database(join(runDir, "air.db"), { readonly: true });
    const mismatch = (
      db.query("SELECT value FROM metrics WHERE name = 'trainer/mismatch' ORDER BY step").all() as Array<{
        value: number;
      }>
    ).map((r) => r.value);
    db.close();
    expect(mismatch).toHaveLength(STEPS);
    for (const m of mismatch) expect(Math.abs(m)).toBeLessThan(1e-6);
    // The server now serves the trained weights: its logprobs moved from the base model's.
    const after = firstLogprobs((await chat(url, SERVED)).body);
    const before = firstLogprobs(base.body);
    expect(after.some((lp, i) => Math.abs(lp - (before[i] ?? lp)) > 1e-9)).toBe(true);
    expect(survivors(run, runDir)).toEqual([]);
  },
  RUN_MS + 60_000,
);
