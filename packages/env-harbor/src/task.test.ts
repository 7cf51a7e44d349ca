import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { readRewardFiles } from "./reward.ts";
import { HarborTaskError, loadHarborTask } from "./task.ts";
import { harborTaskConfigSchema, internetAllowed, sizeToMb } from "./task-config.ts";
import { loadHarborTaskSet } from "./task-set.ts";
import { OWN_TASKS, scratchDataset } from "./testing/fixtures.ts";

describe("task.toml schema", () => {
  test("Harbor's defaults", () => {
    const c = harborTaskConfigSchema.parse({});
    expect(c.verifier.timeout_sec).toBe(600);
    expect(c.agent.timeout_sec).toBeUndefined();
    expect(c.environment).toMatchObject({
      build_timeout_sec: 600,
      cpus: 1,
      memory_mb: 2048,
      storage_mb: 10240,
    });
    expect(c.environment.allow_internet).toBe(true);
    expect(c.schema_version).toBe("1.0");
  });
  test("deprecated version, memory and storage are read as Harbor reads them", () => {
    const c = harborTaskConfigSchema.parse({
      version: "1.0",
      environment: { memory: "4G", storage: "512M" },
    });
    expect(c.environment.memory_mb).toBe(4096);
    expect(c.environment.storage_mb).toBe(512);
    expect(sizeToMb("2048K")).toBe(2);
    expect(() => sizeToMb("lots")).toThrow(/invalid size/);
  });
  test("unknown keys are ignored, a known key of the wrong type is not", () => {
    expect(harborTaskConfigSchema.safeParse({ future: { x: 1 }, verifier: { new_key: 1 } }).success).toBe(
      true,
    );
    const bad = harborTaskConfigSchema.safeParse({ verifier: { timeout_sec: "soon" } });
    expect(bad.success).toBe(false);
  });
  test("network_mode wins over allow_internet", () => {
    expect(internetAllowed(harborTaskConfigSchema.parse({ environment: { allow_internet: false } }))).toBe(
      false,
    );
    expect(
      internetAllowed(
        harborTaskConfigSchema.parse({ environment: { network_mode: "public", allow_internet: false } }),
      ),
    ).toBe(true);
    expect(
      internetAllowed(harborTaskConfigSchema.parse({ environment: { network_mode: "allowlist" } })),
    ).toBe(false);
  });
});

describe("task folders", () => {
  test("the repository's own tasks load, with their fields", async () => {
    const set = await loadHarborTaskSet(OWN_TASKS);
    expect([...set.tasks.keys()]).toEqual(["fizzbuzz-partial", "hello-file", "ml-regression", "sum-numbers"]);
    const sum = set.tasks.get("sum-numbers");
    expect(sum?.config.verifier).toMatchObject({ user: "root", env: { ANSWER_FILE: "/app/answer.txt" } });
    expect(sum?.config.agent).toMatchObject({ user: "agent", timeout_sec: 120 });
    expect(sum?.solution).toBe(join(OWN_TASKS, "sum-numbers/solution/solve.sh"));
    expect(sum?.instruction).toContain("/srv/numbers.txt");
  });

  const cases: Array<[string, Record<string, string | null>, RegExp]> = [
    [
      "malformed TOML",
      { "hello-file/task.toml": "[verifier\ntimeout_sec = 1" },
      /hello-file: task\.toml: not valid TOML/,
    ],
    [
      "a field of the wrong type",
      { "hello-file/task.toml": '[verifier]\ntimeout_sec = "soon"\n' },
      /hello-file: task\.toml: verifier\.timeout_sec/,
    ],
    ["no task.toml", { "hello-file/task.toml": null }, /hello-file: task\.toml: missing/],
    ["no instruction.md", { "hello-file/instruction.md": null }, /hello-file: instruction\.md: missing/],
    ["no tests/test.sh", { "hello-file/tests/test.sh": null }, /hello-file: tests\/test\.sh: missing/],
    [
      "no Dockerfile and no docker_image",
      { "hello-file/environment/Dockerfile": null },
      /hello-file: environment\/Dockerfile: missing/,
    ],
  ];
  for (const [what, edits, message] of cases)
    test(`${what}: an error naming folder and file`, async () => {
      const d = await scratchDataset(["hello-file"], edits);
      try {
        const error = await loadHarborTask(join(d.dir, "hello-file")).catch((e) => e);
        expect(error).toBeInstanceOf(HarborTaskError);
        expect(String(error.message)).toMatch(message);
        expect(String(error.message)).toContain(d.dir);
      } finally {
        await d.remove();
      }
    });

  test("a bad task stops the set unless skip_invalid, which leaves it out", async () => {
    const d = await scratchDataset(["hello-file", "fizzbuzz-partial"], { "hello-file/tests/test.sh": null });
    try {
      await expect(loadHarborTaskSet(d.dir)).rejects.toThrow(/hello-file: tests\/test\.sh: missing/);
      const set = await loadHarborTaskSet(d.dir, { skipInvalid: true });
      expect([...set.tasks.keys()]).toEqual(["fizzbuzz-partial"]);
      expect(set.skipped.map((e) => e.file)).toEqual(["tests/test.sh"]);
      await expect(loadHarborTaskSet(d.dir, { names: ["nope"] })).rejects.toThrow(
        /nope: no such task folder/,
      );
    } finally {
      await d.remove();
    }
  });
});

describe("reward files", () => {
  test("reward.txt, reward.json with several keys, and json + txt", () => {
    expect(readRewardFiles({ text: "1\n" })).toEqual({ ok: true, scores: { reward: 1 } });
    expect(readRewardFiles({ json: '{"reward": 0.5, "r2": 0.4, "note": "x", "ok": true}' })).toEqual({
      ok: true,
      scores: { reward: 0.5, r2: 0.4 },
    });
    expect(readRewardFiles({ json: '{"acc": 0.7}', text: "0.25" })).toEqual({
      ok: true,
      scores: { acc: 0.7, reward: 0.25 },
    });
  });
  test("no file, an empty file or junk: no score, with the reason", () => {
    expect(readRewardFiles({})).toMatchObject({ ok: false, error: expect.stringContaining("neither") });
    expect(readRewardFiles({ text: "" })).toMatchObject({ ok: false, error: "reward.txt is empty" });
    expect(readRewardFiles({ text: "yes" })).toMatchObject({ ok: false });
    expect(readRewardFiles({ json: "[1]" })).toMatchObject({ ok: false });
  });
});
