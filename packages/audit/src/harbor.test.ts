import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadConfig, PluginRegistry } from "@air/core";
import { harborPlugin } from "@air/env-harbor";
import { scriptedPolicyPlugin } from "@air/policy-scripted";
import { deltaReward } from "@air/reward-delta";
import { auditConfig } from "./run.ts";

const FIXTURES = resolve(import.meta.dir, "../fixtures");
const out = mkdtempSync(join(tmpdir(), "air-audit-harbor-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

test("Harbor tasks: a test.sh that passes an empty run and tests baked into the image are critical; the oracle and the forgery are judged", async () => {
  const { default: grpo } = await import("@air/advantage-grpo");
  const { branching } = await import("@air/strategies");
  const { default: none } = await import("@air/trainer-none");
  const registry = new PluginRegistry({});
  for (const p of [harborPlugin, scriptedPolicyPlugin, deltaReward, grpo, branching, none])
    registry.register(p);
  const config = await loadConfig(join(FIXTURES, "harbor-leaky.toml"), {
    registry,
    overrides: { run: { output_dir: out } },
  });
  const report = await auditConfig(config, { repeats: 1, concurrency: 2, print: () => {}, sink: () => {} });
  const verdict = (task: string) =>
    Object.fromEntries(
      report.findings.filter((f) => f.task === task).map((f) => [f.probe, [f.verdict, f.critical]]),
    );
  expect(verdict("always-passes")).toEqual({
    "oracle (solution/solve.sh)": ["warn", false],
    "empty run": ["flagged", true],
    "forged reward files": ["held", false],
    "tests and solution by path": ["held", false],
  });
  expect(verdict("tests-in-image")).toEqual({
    "oracle (solution/solve.sh)": ["ok", false],
    "empty run": ["ok", false],
    "forged reward files": ["held", false],
    "tests and solution by path": ["broken", true],
  });
  expect(report.critical).toBe(2);
}, 600_000);
