import { describe, expect, test } from "bun:test";
import type { Batch, EventHandlers } from "@air/core";
import { makeSample, makeTrajectory } from "@air/core/testing";
import { netrcPassword } from "./auth.ts";
import { wandbName } from "./metrics.ts";
import { redactSecrets, WandbRecorder } from "./recorder.ts";
import type { RunSink } from "./sink.ts";
import { conversationText, MAX_MESSAGES_CHARS, rolloutsTable, sampleEvenly, tableFile } from "./table.ts";

function memorySink() {
  const calls = {
    rows: [] as Array<Record<string, unknown>>,
    files: [] as string[],
    summaries: [] as Array<Record<string, unknown>>,
    exit: -1,
  };
  const sink: RunSink = {
    location: "memory",
    start: async () => {},
    config: () => {},
    history: (row) => calls.rows.push(row),
    summary: (s) => calls.summaries.push(s),
    file: (path) => calls.files.push(path),
    finish: async (code) => {
      calls.exit = code;
    },
  };
  return { sink, calls };
}

const batch = (step: number): Batch => ({ schemaVersion: 1, step, samples: [], metrics: {} });

describe("recorder", () => {
  test("one row per step: step:end, the trainer's metrics and the eval of that step merge; committed on the next step", async () => {
    const { sink, calls } = memorySink();
    let now = 1000;
    const r = new WandbRecorder(sink, { tableRows: 0, startTimeMs: 0, now: () => now });
    const h = r.hooks as Required<EventHandlers>;
    const stepEnd = (step: number) =>
      h["step:end"]({
        step,
        trajectories: [],
        batch: batch(step),
        metrics: { "reward/mean": step, "rollout/count": 4 },
        warnings: [],
      });
    await stepEnd(0);
    await h["weights:updated"]({
      weights: { version: 1 },
      metrics: { "trainer/loss": 0.5, "time/train_wait_s": 2 },
    });
    expect(calls.rows).toHaveLength(0);
    await h["eval:end"]({
      step: 0,
      policyVersion: 1,
      trajectories: [],
      metrics: { "eval/reward/mean": 0.25 },
    });
    now = 3000;
    await stepEnd(1);
    expect(calls.rows).toEqual([
      {
        step: 0,
        "reward/mean": 0,
        "progress/rollouts": 4,
        "progress/total_rollouts": 4,
        "loss/mean": 0.5,
        "time/wait_for_policy": 2,
        "eval/reward/mean": 0.25,
        _step: 0,
        _runtime: 3,
        _timestamp: 3,
      },
    ]);
    await h["run:end"]({ status: "failed", unsettled: [] });
    await r.finish();
    expect(calls.rows.map((x) => x._step)).toEqual([0, 1]);
    expect(calls.rows[1]!["progress/total_rollouts"]).toBe(8);
    expect(calls.summaries.at(-1)!["loss/mean"]).toBe(0.5);
    expect(calls.summaries.at(-1)!["reward/mean"]).toBe(1);
    expect(calls.exit).toBe(1);
  });

  test("a completed run exits 0; a step's rollouts table is logged as a table-file value", async () => {
    const { sink, calls } = memorySink();
    const r = new WandbRecorder(sink, { tableRows: 1, startTimeMs: 0 });
    const h = r.hooks as Required<EventHandlers>;
    const trajectories = [
      makeTrajectory({ id: "t1", step: 0, reward: 1 }),
      makeTrajectory({ id: "t2", step: 0 }),
    ];
    await h["step:end"]({ step: 0, trajectories, batch: batch(0), metrics: {}, warnings: [] });
    await h["run:end"]({ status: "completed", unsettled: [] });
    await r.finish();
    expect(calls.exit).toBe(0);
    expect(calls.files).toHaveLength(1);
    expect(calls.rows[0]!.rollouts).toMatchObject({
      _type: "table-file",
      nrows: 1,
      ncols: 5,
      path: calls.files[0],
    });
  });
});

describe("names, tables, netrc", () => {
  test("secrets in the config are redacted before they are sent", () => {
    const config = {
      policy: { api_key: "sk-1", max_tokens: 9, headers: [{ bearer_token: "t" }] },
      env: { secret_files: ["a"] },
    };
    expect(redactSecrets(config)).toEqual({
      policy: { api_key: "<redacted>", max_tokens: 9, headers: [{ bearer_token: "<redacted>" }] },
      env: { secret_files: ["a"] },
    });
  });

  test("air names become prime-rl's where prime-rl logs the same quantity", () => {
    expect(wandbName("rollout/turns/mean")).toBe("effective/num_turns/mean");
    expect(wandbName("trainer/entropy")).toBe("entropy/all/mean");
    expect(wandbName("trainer/mismatch_kl")).toBe("mismatch_kl/all/mean");
    expect(wandbName("time/step_s")).toBe("time/step");
    expect(wandbName("trainer/perf/mfu")).toBe("perf/mfu");
    expect(wandbName("trainer/time/step")).toBe("trainer/time/step");
    expect(wandbName("reward/mean")).toBe("reward/mean");
    expect(wandbName("group/zero_variance_frac")).toBe("group/zero_variance_frac");
  });

  test("tables: rows spread over the step, advantage from the batch, named by key, step and content hash", () => {
    expect(sampleEvenly([1, 2, 3, 4, 5, 6], 3)).toEqual([1, 3, 5]);
    const t = makeTrajectory({ id: "a", step: 2, reward: 0.5 });
    const b: Batch = {
      ...batch(2),
      samples: [makeSample({ trajectoryId: "a", lossMask: [0, 1], advantages: [0, -0.75] })],
    };
    const table = rolloutsTable(2, [t], b, 4);
    expect(table.data[0]!.slice(0, 2)).toEqual([2, t.task]);
    expect(table.data[0]!.slice(3)).toEqual([0.5, -0.75]);
    const long = makeTrajectory({
      initialMessages: [{ role: "user", content: "x".repeat(MAX_MESSAGES_CHARS + 100) }],
    });
    const cell = conversationText(long);
    expect(cell).toContain("[… 106 characters left out …]");
    expect(cell.startsWith("user: xxx")).toBe(true);
    const file = tableFile("eval/rollouts", 2, table);
    expect(file.path).toMatch(/^media\/table\/eval_rollouts_2_[0-9a-f]{20}\.table\.json$/);
    expect(file.value.size).toBe(Buffer.byteLength(file.content));
  });

  test("netrc: the host's password, else the default entry", () => {
    const text =
      "machine a.example login u password pa\n# machine api.wandb.ai password no\ndefault login d password pd";
    expect(netrcPassword(text, "a.example")).toBe("pa");
    expect(netrcPassword(text, "api.wandb.ai")).toBe("pd");
    expect(netrcPassword("machine a login u password p", "b")).toBeUndefined();
  });
});
