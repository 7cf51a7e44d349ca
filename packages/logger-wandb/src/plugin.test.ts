import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runToml } from "@air/core/testing";
import { wandbLoggerConfig } from "./options.ts";
import { wandbLogger } from "./plugin.ts";
import { decodeFields, readRecords } from "./read-records.ts";
import { type FakeWandb, fakeWandb } from "./test-server.ts";

const dir = mkdtempSync(join(tmpdir(), "air-wandb-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const saved = { key: process.env.WANDB_API_KEY, netrc: process.env.NETRC, base: process.env.WANDB_BASE_URL };
let server: FakeWandb | undefined;
afterEach(() => {
  server?.stop();
  server = undefined;
  for (const [name, value] of [
    ["WANDB_API_KEY", saved.key],
    ["NETRC", saved.netrc],
    ["WANDB_BASE_URL", saved.base],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

function toml(name: string, logger: string, steps = 3): string {
  return `[run]
name = "${name}"
max_steps = ${steps}
output_dir = "${dir}/outputs"

[orchestrator]
batch_size = 4
rollouts_per_example = 2
max_turns = 3
eval_every = 2

[env]
plugin = "counting"
[policy]
plugin = "random"
[trainer]
plugin = "memory"
[advantage]
plugin = "mean"
[strategy]
plugin = "per-turn"
[reward]
plugin = "last-score"

[[logger]]
plugin = "wandb"
${logger}
`;
}

type Stream = { files?: Record<string, { offset: number; content: string[] }>; uploaded?: string[] };

describe("wandb logger in a real run", () => {
  test("rl --resume continues the same W&B run: its id from the run dir, history after the lines W&B holds", async () => {
    server = fakeWandb();
    process.env.WANDB_API_KEY = "k".repeat(40);
    const logger = `entity = "team"\nproject = "p"\nbase_url = "${server.baseUrl}"\nflush_ms = 20`;
    const first = await runToml(toml("resumed", logger, 2), { plugins: [wandbLogger], dir });
    expect(first.summary.status).toBe("completed");
    const runDir = join(dir, "outputs", "resumed");
    const id = (JSON.parse(readFileSync(join(runDir, "wandb-run.json"), "utf8")) as { runId: string }).runId;
    expect(server.graphql("UpsertBucket")[0]!.variables.name).toBe(id);
    const streamed = () =>
      server!.requests
        .filter((r) => r.path === `/files/team/p/${id}/file_stream`)
        .flatMap((r) => {
          const h = (r.body as Stream).files?.["wandb-history.jsonl"];
          return h ? [h] : [];
        });
    const before = streamed().reduce((n, h) => Math.max(n, h.offset + h.content.length), 0);
    expect(before).toBeGreaterThan(0);
    const requestsBefore = server.requests.length;
    const second = await runToml(toml("resumed", logger, 4), {
      plugins: [wandbLogger],
      dir,
      startStep: 2,
      context: { resume: { startStep: 2 } },
    });
    expect(second.summary.status).toBe("completed");
    // same run id, asked where its history ends, and the new rows go after it
    expect(server.graphql("UpsertBucket").every((q) => q.variables.name === id)).toBe(true);
    expect(server.graphql("RunResumeStatus")[0]!.variables).toMatchObject({
      name: id,
      entity: "team",
      project: "p",
    });
    const later = server.requests
      .slice(requestsBefore)
      .filter((r) => r.path === `/files/team/p/${id}/file_stream`)
      .flatMap((r) => {
        const h = (r.body as Stream).files?.["wandb-history.jsonl"];
        return h ? [h] : [];
      });
    expect(later[0]?.offset).toBe(before);
    // a fresh run (no --resume) in the same dir starts a new W&B run
    await runToml(toml("resumed", logger, 1), { plugins: [wandbLogger], dir });
    expect(server.graphql("UpsertBucket").at(-1)!.variables.name).not.toBe(id);
  });

  test("online: run registered at start, one history row per step with prime-rl names, tables, eval, config", async () => {
    server = fakeWandb();
    process.env.WANDB_API_KEY = "k".repeat(40);
    const run = await runToml(
      toml(
        "online",
        `entity = "team"\nproject = "p"\ntags = ["t1"]\nbase_url = "${server.baseUrl}"\nflush_ms = 20\ntable_rows = 2`,
      ),
      { plugins: [wandbLogger], dir },
    );
    expect(run.summary.status).toBe("completed");
    const upserts = server.graphql("UpsertBucket");
    expect(upserts[0]!.variables).toMatchObject({
      project: "p",
      entity: "team",
      displayName: "online",
      tags: ["t1"],
    });
    expect(server.requests[0]!.path).toBe("/graphql");
    const config = JSON.parse(upserts.find((u) => u.variables.config)!.variables.config as string);
    expect(config.orchestrator.value.batch_size).toBe(4);
    expect(config.run.value.name).toBe("online");

    const streams = server.requests
      .filter((r) => r.path.startsWith("/files/team/p/"))
      .map((r) => r.body as Stream);
    const lines = streams.flatMap((s) => s.files?.["wandb-history.jsonl"]?.content ?? []);
    const offsets = streams.flatMap((s) => s.files?.["wandb-history.jsonl"]?.offset ?? []);
    const rows = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => r._step)).toEqual([0, 1, 2]);
    expect(offsets[0]).toBe(0);
    const first = rows[0]!;
    for (const key of [
      "reward/mean",
      "effective/num_turns/mean",
      "time/step",
      "progress/rollouts",
      "all/has_error/mean",
    ])
      expect(typeof first[key]).toBe("number");
    expect(first["rollout/turns/mean"]).toBeUndefined();
    expect(first["time/wait_for_policy"]).toBeGreaterThanOrEqual(0);
    expect(first.loss).toBe(1);
    expect(first["reward/mean"]).toBeCloseTo(run.steps[0]!.metrics["reward/mean"]!, 12);
    const total = run.steps.reduce((a, s) => a + s.metrics["rollout/count"]!, 0);
    expect(total).toBeGreaterThan(0);
    expect(rows[2]!["progress/total_rollouts"]).toBe(total);
    expect(typeof rows[1]!["eval/reward/mean"]).toBe("number");
    const table = first.rollouts as { _type: string; path: string; nrows: number; ncols: number };
    expect(table).toMatchObject({ _type: "table-file", nrows: 2, ncols: 5 });
    const put = server.requests.find((r) => r.method === "PUT" && r.path === `/upload/${table.path}`)!;
    const body = put.body as { columns: string[]; data: unknown[][] };
    expect(body.columns).toEqual(["step", "task", "messages", "reward", "advantage"]);
    expect(body.data[0]![0]).toBe(0);
    expect(typeof body.data[0]![2]).toBe("string");
    expect(streams.flatMap((s) => s.uploaded ?? [])).toContain(table.path);
    expect(rows[1]!["eval/rollouts"]).toMatchObject({ _type: "table-file" });
    const summaries = streams.flatMap((s) => s.files?.["wandb-summary.json"]?.content ?? []);
    expect(JSON.parse(summaries.at(-1)!)._step).toBe(2);
    expect(streams.at(-1)).toEqual({ complete: true, exitcode: 0 } as Stream);
  });

  test("online without an API key: the run fails at its start, before any rollout, saying what to set", async () => {
    delete process.env.WANDB_API_KEY;
    const netrc = join(dir, "empty-netrc");
    writeFileSync(netrc, "machine other.example login u password p\n");
    process.env.NETRC = netrc;
    const run = await runToml(toml("nokey", ""), { plugins: [wandbLogger], dir });
    expect(run.summary.status).toBe("failed");
    expect(run.summary.error).toContain("[plugin wandb] no W&B API key for api.wandb.ai: set WANDB_API_KEY");
    expect(run.summary.stepsCompleted).toBe(0);
    expect(run.trajectories).toHaveLength(0);
  });

  test("online: the key is read from netrc for the base_url's host", async () => {
    server = fakeWandb();
    delete process.env.WANDB_API_KEY;
    const netrc = join(dir, "netrc");
    writeFileSync(netrc, `machine 127.0.0.1\n  login user\n  password netrc-key\n`);
    process.env.NETRC = netrc;
    const run = await runToml(toml("netrc", `entity = "e"\nbase_url = "${server.baseUrl}"`, 1), {
      plugins: [wandbLogger],
      dir,
    });
    expect(run.summary.status).toBe("completed");
    expect(server.requests[0]!.headers.authorization).toBe(
      `Basic ${Buffer.from("api:netrc-key").toString("base64")}`,
    );
  });

  test("disabled: nothing is sent or written", async () => {
    server = fakeWandb();
    const run = await runToml(toml("off", `mode = "disabled"\nbase_url = "${server.baseUrl}"`, 1), {
      plugins: [wandbLogger],
      dir,
    });
    expect(run.summary.status).toBe("completed");
    expect(server.requests).toHaveLength(0);
    expect(readdirSync(run.runDir)).not.toContain("wandb");
  });

  test("offline: writes offline-run-*/run-<id>.wandb and the table files", async () => {
    delete process.env.WANDB_API_KEY;
    const run = await runToml(toml("offline", `mode = "offline"\nrun_id = "offl1234"\ntable_rows = 1`, 2), {
      plugins: [wandbLogger],
      dir,
    });
    expect(run.summary.status).toBe("completed");
    const [runDir] = readdirSync(join(run.runDir, "wandb"));
    expect(runDir).toMatch(/^offline-run-\d{8}_\d{6}-offl1234$/);
    const base = join(run.runDir, "wandb", runDir!);
    expect(readdirSync(base).sort()).toEqual(["files", "run-offl1234.wandb"]);
    const tables = readdirSync(join(base, "files", "media", "table"));
    expect(tables.filter((t) => t.startsWith("rollouts_"))).toHaveLength(2);
    const summary = JSON.parse(readFileSync(join(base, "files", "wandb-summary.json"), "utf8"));
    expect(summary._step).toBe(1);

    const records = readRecords(new Uint8Array(readFileSync(join(base, "run-offl1234.wandb")))).map(
      decodeFields,
    );
    const kinds = records.map((fields) => fields.find((f) => f.field !== 1)!.field);
    const NAMES: Record<number, string> = {
      2: "history",
      3: "summary",
      5: "config",
      6: "files",
      17: "run",
      18: "exit",
      20: "final",
      21: "header",
      22: "footer",
    };
    expect(kinds.map((k) => NAMES[k]).filter((k) => k !== "files")).toEqual([
      "header",
      "run",
      "config",
      "history",
      "history",
      "summary",
      "exit",
      "final",
      "footer",
    ]);
    expect(records.map((fields) => Number(fields.find((f) => f.field === 1)!.varint))).toEqual(
      records.map((_, k) => k + 1),
    );
    const body = (k: number) => decodeFields(records[kinds.indexOf(k)]!.find((f) => f.field === k)!.bytes!);
    const str = (b?: Uint8Array) => new TextDecoder().decode(b);
    const runRecord = body(17);
    expect(str(runRecord.find((f) => f.field === 1)!.bytes)).toBe("offl1234");
    expect(str(runRecord.find((f) => f.field === 3)!.bytes)).toBe("air");
    expect(str(runRecord.find((f) => f.field === 8)!.bytes)).toBe("offline");
    const configKeys = body(5).map((item) =>
      str(decodeFields(item.bytes!).find((f) => f.field === 1)!.bytes),
    );
    expect(configKeys).toContain("orchestrator");
    const historyKeys = body(2)
      .filter((f) => f.field === 1)
      .map((item) => str(decodeFields(item.bytes!).find((f) => f.field === 1)!.bytes));
    expect(historyKeys).toContain("reward/mean");
    expect(historyKeys).toContain("rollouts");
  });

  test("preflight (rl check): fails online without a key, ok with one, skipped offline", async () => {
    delete process.env.WANDB_API_KEY;
    process.env.NETRC = join(dir, "missing-netrc");
    const preflight = wandbLogger.launch!.preflight!;
    const ctx = {} as Parameters<typeof preflight>[1];
    const online = wandbLoggerConfig.parse({});
    expect((await preflight(online, ctx))[0]).toMatchObject({ status: "fail", name: "wandb api key" });
    process.env.WANDB_API_KEY = "k";
    expect((await preflight(online, ctx))[0]).toMatchObject({ status: "ok", message: "from WANDB_API_KEY" });
    expect((await preflight(wandbLoggerConfig.parse({ mode: "offline" }), ctx))[0]!.status).toBe("skip");
  });
});
