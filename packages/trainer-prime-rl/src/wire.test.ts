import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { encode } from "@msgpack/msgpack";
import plugin from "./plugin.ts";
import { testContext, testSample } from "./testing.ts";
import { toTrainingSample } from "./wire.ts";

const CHECK = join(import.meta.dir, "fixtures", "check_batch.py");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function check(file: string, expected: unknown): Promise<string> {
  const want = join(dirname(file), "expected.json");
  writeFileSync(want, JSON.stringify(expected));
  const proc = Bun.spawn(["/usr/bin/python3", CHECK, file, want], { stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill(), 20_000);
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  clearTimeout(timer);
  return (out + (await new Response(proc.stderr).text())).trim();
}

describe("train_rollouts.bin", () => {
  test("python3-msgpack reads prime-rl's positional layout, types, nils and step numbering", async () => {
    const ctx = testContext();
    dirs.push(ctx.runDir);
    const trainer = await plugin.create(
      plugin.configSchema.parse({ prime_rl_version: "0.8", env_name: "mlgym" }),
      ctx,
    );
    const prompt = Array.from({ length: 20 }, (_, i) => i + 60);
    const samples = [
      testSample(prompt, [300, 256], [-1.25, 0], 0.5),
      testSample([1, 2], [301, 256], [-2, 0], -1),
      ...Array.from({ length: 16 }, (_, i) => testSample([i], [302 + i], [-0.5 - i], i % 3)),
    ];
    samples[1]!.temperature = 0.7;
    const expectStep = async (runName: string, primeStep: number) => {
      const dir = join(ctx.runDir, "prime-rl", runName, "rollouts", `step_${primeStep}`);
      expect(readdirSync(dir)).toEqual(["train_rollouts.bin"]);
      const expected = { step: primeStep, samples: samples.map((s) => toTrainingSample(s, "mlgym")) };
      expect(await check(join(dir, "train_rollouts.bin"), expected)).toBe("ok");
    };
    for (const step of [0, 1]) {
      await trainer.submit({ schemaVersion: 1, step, samples, metrics: {} });
      await expectStep("run_default", step + 1);
    }
    // A resumed run (first air step 4) starts at prime-rl step 5.
    const resumed = await plugin.create(
      plugin.configSchema.parse({ prime_rl_version: "0.8", env_name: "mlgym", run_name: "run_b" }),
      ctx,
    );
    await resumed.submit({ schemaVersion: 1, step: 4, samples, metrics: {} });
    await expectStep("run_b", 5);
    expect(existsSync(join(ctx.runDir, "prime-rl", "run_default", "control", "orch.toml"))).toBe(true);
  });

  test("the check fails on a plain msgpack encoding (integral floats as ints, map layout)", async () => {
    const ctx = testContext();
    dirs.push(ctx.runDir);
    const sample = toTrainingSample(testSample([1], [300], [-1], 1), "x");
    const file = join(ctx.runDir, "plain.bin");
    writeFileSync(file, encode([[Object.values(sample)], 1, null]));
    expect(await check(file, { step: 1, samples: [sample] })).toContain("not a 13-element array");
    writeFileSync(
      file,
      encode([
        [[...Object.values(sample).slice(0, 5), null, null, null, null, null, null, null, sample.advantages]],
        1,
        null,
      ]),
    );
    expect(await check(file, { step: 1, samples: [sample] })).toContain("logprobs[0] is int, not float");
  });

  test("rejects a sample whose per-token arrays disagree", () => {
    const bad = testSample([1, 2], [300], [-1], 1);
    bad.logprobs.pop();
    expect(() => toTrainingSample(bad, "x")).toThrow(/logprobs has 2 entries, tokenIds 3/);
  });
});
