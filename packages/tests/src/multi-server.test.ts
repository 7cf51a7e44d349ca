import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@air/core";
import { OpenAIPolicy, openaiPolicyConfig } from "@air/policy-openai";
import {
  startTiny,
  TINY_PY_DIR,
  TINY_PYTHON,
  TINY_SERVER_SCRIPT,
  type TinyProcess,
  tinyFiles,
  writeTinyConfig,
} from "@air/tiny";

/**
 * Several inference servers behind one policy, with two real tiny servers (Python, torch): rollouts spread
 * over both and stay on their server, a weight update reaches both (each server reports the version it serves
 * in `policy_version`), a killed server is taken out and the rollouts go on on the other one, and a restarted
 * server on the same port is readmitted with the latest weights.
 */
const COMMANDS = ["ls", "python train.py", "validate", "submit"];
const dir = mkdtempSync(join(tmpdir(), "air-multi-server-"));
const servers: TinyProcess[] = [];
const ports: number[] = [];
const logs: string[] = [];

async function startServer(port: number): Promise<TinyProcess> {
  const file = join(dir, `tiny-${port}.json`);
  writeTinyConfig(file, { port, commands: COMMANDS, seed: 3 });
  const server = await startTiny(TINY_SERVER_SCRIPT, file, 60_000);
  servers.push(server);
  return server;
}

/** A weights directory the tiny server loads (`model.pt` of the same architecture). */
function writeWeights(name: string): string {
  const out = join(dir, name);
  const code = [
    "import json, sys",
    `sys.path.insert(0, ${JSON.stringify(TINY_PY_DIR)})`,
    "from air_tiny import model as tm",
    `config = tm.load_model_config(${JSON.stringify(tinyFiles(join(dir, "tiny-0.json")).modelDir)})`,
    `tm.save_weights(tm.build_model(config), ${JSON.stringify(out)})`,
  ].join("\n");
  const run = Bun.spawnSync([TINY_PYTHON, "-c", code], { stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`writing weights: ${run.stderr.toString()}`);
  return out;
}

/** The weights version a tiny server reports in its answers (`policy_version`: loads since it started). */
async function servedVersion(port: number): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: "POST",
    body: JSON.stringify({
      model: "tiny",
      messages: [{ role: "user", content: "v?" }],
      max_completion_tokens: 4,
    }),
    signal: AbortSignal.timeout(20_000),
  });
  return Number(((await response.json()) as { policy_version?: unknown }).policy_version);
}

beforeAll(async () => {
  for (const s of await Promise.all([startServer(0), startServer(0)])) ports.push(Number(s.ready.port));
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
});

describe("two real tiny servers behind one policy", () => {
  test("spread, sticky, weight updates to both, a killed server taken out and readmitted", async () => {
    const controller = new AbortController();
    const config = openaiPolicyConfig.parse({
      base_url: ports.map((p) => `http://127.0.0.1:${p}/v1`),
      server_probe_ms: 200,
      retry_backoff_ms: 50,
      retry_backoff_max_ms: 200,
      max_tokens: 16,
      parser: "none",
    });
    const policy = new OpenAIPolicy(config, {
      modelName: "tiny",
      log: createLogger("openai", (_level, _source, message) => logs.push(message)),
      signal: controller.signal,
    });
    try {
      const messages = [{ role: "user" as const, content: "Solve the task." }];
      const turn = (rolloutId: string, turnIndex: number) =>
        policy.generate({ messages, rolloutId, turnIndex, signal: controller.signal });
      const ids = Array.from({ length: 8 }, (_, i) => `r${i}`);
      await Promise.all(ids.map((id) => turn(id, 0)));
      const sent = policy.pool.members.map((m) => m.sent);
      expect(sent.every((n) => n >= 2)).toBe(true);
      const home = new Map(ids.map((id) => [id, policy.pool.pick(id).server.baseUrl]));
      await Promise.all(ids.map((id) => turn(id, 1)));
      expect(ids.every((id) => policy.pool.pick(id).server.baseUrl === home.get(id))).toBe(true);

      // a weight update reaches both servers: every later answer is sampled by version 1 on either server
      await policy.loadWeights({ version: 1, path: writeWeights("w1") });
      expect(policy.pool.members.map((m) => m.version)).toEqual([1, 1]);
      const after = await Promise.all(ids.map((id) => turn(id, 2)));
      expect(after.every((g) => g.policyVersion === 1 && g.completionTokenIds.length > 0)).toBe(true);
      expect(await Promise.all(ports.map(servedVersion))).toEqual([1, 1]);

      // kill the second server: its rollouts move to the first, nothing is lost
      // `servers` is in the order they became ready; find the one serving ports[1] (the pool's second member)
      const second = servers.find((s) => Number(s.ready.port) === ports[1]);
      if (second === undefined) throw new Error("no second server");
      await second.stop();
      const survived = await Promise.all(ids.map((id) => turn(id, 3)));
      expect(survived.length).toBe(8);
      expect(policy.pool.members[1]?.up).toBe(false);
      expect(logs.some((l) => l.includes(`127.0.0.1:${ports[1]}/v1 out of rotation`))).toBe(true);

      // a weight update while it is down goes to the first only; the restarted server gets it before it serves
      await policy.loadWeights({ version: 2, path: writeWeights("w2") });
      await startServer(ports[1] ?? 0);
      // the restarted server imports torch first: seconds idle, a minute on a busy machine
      const deadline = Date.now() + 120_000;
      while (policy.pool.members[1]?.up !== true && Date.now() < deadline) await Bun.sleep(50);
      expect(policy.pool.members[1]?.up).toBe(true);
      expect(policy.pool.members[1]?.version).toBe(2);
      const models = await (await fetch(`http://127.0.0.1:${ports[1]}/v1/models`)).json();
      expect(JSON.stringify(models)).toContain("tiny");
      // the first server loaded twice; the restarted one once (the latest weights) since it started
      expect(await Promise.all(ports.map(servedVersion))).toEqual([2, 1]);
      const fresh = await Promise.all(Array.from({ length: 8 }, (_, i) => turn(`n${i}`, 0)));
      expect(fresh.every((g) => g.policyVersion === 2)).toBe(true);
      expect(policy.pool.members[1]?.sent).toBeGreaterThan(sent[1] ?? 0);
    } finally {
      controller.abort();
    }
  }, 300_000);
});
