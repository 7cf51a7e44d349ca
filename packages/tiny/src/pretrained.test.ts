import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTiny, type TinyProcess } from "./process.ts";
import { TINY_PY_DIR, TINY_PYTHON, TINY_SERVER_SCRIPT, tinyFiles, writeTinyConfig } from "./scripts.ts";

// A model directory with weights (`model.pt` beside config.json, as `<run dir>/final-weights` holds them) is
// served with those weights, as vLLM serves a checkpoint dir; without them, the seed's initial weights.
const dir = mkdtempSync(join(tmpdir(), "air-tiny-pretrained-"));
const servers: TinyProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

const COMMANDS = ["ls", "python train.py", "validate", "submit"];
const MESSAGES = [{ role: "user", content: "Train, then validate." }];

async function firstLogprobs(server: TinyProcess): Promise<number[]> {
  const r = await fetch(`http://127.0.0.1:${server.ready.port}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ messages: MESSAGES, logprobs: true, top_logprobs: 4, seed: 7, max_tokens: 1 }),
    signal: AbortSignal.timeout(20_000),
  });
  expect(r.status).toBe(200);
  const body = (await r.json()) as {
    choices: Array<{
      logprobs: { content: Array<{ top_logprobs: Array<{ token: string; logprob: number }> }> };
    }>;
  };
  const top = body.choices[0]?.logprobs.content[0]?.top_logprobs ?? [];
  return [...top].sort((a, b) => a.token.localeCompare(b.token)).map((t) => t.logprob);
}

test("a model dir with model.pt is served with its weights", async () => {
  const base = join(dir, "base.json");
  writeTinyConfig(base, { port: 0, commands: COMMANDS, seed: 5 });
  // Trained weights: the seed's model with every parameter shifted, saved as the trainer saves a broadcast.
  const trained = join(dir, "trained-weights");
  mkdirSync(trained);
  const save = Bun.spawnSync(
    [
      TINY_PYTHON,
      "-c",
      "import sys, torch; from air_tiny import model as tm\n" +
        "m = tm.build_model(tm.load_model_config(sys.argv[1]))\n" +
        "with torch.no_grad():\n    [p.add_(0.3) for p in m.parameters()]\n" +
        "tm.save_weights(m, sys.argv[2])",
      tinyFiles(base).modelDir,
      trained,
    ],
    { env: { ...process.env, PYTHONPATH: TINY_PY_DIR }, stderr: "pipe", timeout: 60_000 },
  );
  expect(save.exitCode, save.stderr.toString()).toBe(0);

  const fresh = await startTiny(TINY_SERVER_SCRIPT, base);
  servers.push(fresh);
  const initial = await firstLogprobs(fresh);
  const update = await fetch(`http://127.0.0.1:${fresh.ready.port}/update_weights`, {
    method: "POST",
    body: JSON.stringify({ weight_dir: trained }),
    signal: AbortSignal.timeout(20_000),
  });
  expect(update.status).toBe(200);
  const updated = await firstLogprobs(fresh);
  expect(updated).not.toEqual(initial);

  // The same config, its model dir now holding the trained weights: served as the updated server serves them.
  const withWeights = join(dir, "with-weights.json");
  writeTinyConfig(withWeights, { port: 0, commands: COMMANDS, seed: 5 });
  copyFileSync(join(trained, "model.pt"), join(tinyFiles(withWeights).modelDir, "model.pt"));
  const pretrained = await startTiny(TINY_SERVER_SCRIPT, withWeights);
  servers.push(pretrained);
  expect(await firstLogprobs(pretrained)).toEqual(updated);
}, 240_000);
