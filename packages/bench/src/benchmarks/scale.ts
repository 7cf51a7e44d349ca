import { procCpuMs, runWorker, type SimServerProcess, spawnSimServer } from "../proc.ts";
import type { BenchReport } from "../report.ts";
import { fmt } from "../stats.ts";
import type { BenchOptions } from "./pipeline.ts";
import type { FloorSample } from "./scale-floor-worker.ts";
import {
  COMPLETION_TOKENS,
  ENV,
  failedSample,
  LLM,
  type Row,
  SERVERS,
  scaleReport,
  TASK_CHARS,
  TURNS,
} from "./scale-report.ts";
import type { ScaleInput, ScaleSample } from "./scale-worker.ts";

const WORKER = `${import.meta.dir}/scale-worker.ts`;
const FLOOR_WORKER = `${import.meta.dir}/scale-floor-worker.ts`;
const WORKER_TIMEOUT_MS = Number(process.env.AIR_BENCH_SCALE_WORKER_S ?? 1500) * 1000;

/**
 * `--quick`: a smoke check that ends within 5 minutes on this 2-core machine, busy or not: one case, 5 turns (a
 * rollout ~40 s; prompts stay far below the window), the run and the bare client (its warm-up and run ~80 s)
 * each bounded at 130 s (a run that does not finish in time is a row saying so). It does not reproduce
 * BENCHMARKS.md section 12 (the full command does).
 */
export const QUICK = { label: "1024, 8k", turns: 5, workerMs: 130_000, floorMs: 130_000 };

interface Case {
  label: string;
  inFlight: number;
  /** Observation characters: the prompt grows by about completion + observation ÷ 4 tokens a turn. */
  observationChars: number;
  context: string;
  /** The model's context window (`policy.max_model_len`): prompts grow to near it, as a real run's do. */
  maxModelLen: number;
  repeats: number;
}

/**
 * Benchmark 11: internet scale, simulated. 30-turn rollouts whose prompts grow by a few hundred tokens a turn to
 * 8k and 32k tokens, over 4 simulated vLLM servers (own processes, `policy.base_url` a list), the sqlite logger
 * on: throughput vs the bound, orchestrator CPU per turn, heap per in-flight rollout against 1.5 × its own
 * tokens and text. The store and dashboard at that scale: `scale-store` (benchmark 12).
 * @example const report = await scaleBenchmark({ quick: false });
 */
export async function scaleBenchmark(options: BenchOptions): Promise<BenchReport> {
  const r = options.quick ? 1 : 2;
  const cases: Case[] = [
    {
      label: "1024, 8k",
      inFlight: 1024,
      observationChars: 600,
      context: "8k",
      maxModelLen: 8192,
      repeats: r,
    },
    {
      label: "4096, 8k",
      inFlight: 4096,
      observationChars: 600,
      context: "8k",
      maxModelLen: 8192,
      repeats: r,
    },
    {
      label: "1024, 32k",
      inFlight: 1024,
      observationChars: 3850,
      context: "32k",
      maxModelLen: 32_768,
      repeats: 1,
    },
  ];
  // Labels hold a comma ("1024, 8k"): several cases are separated by ";".
  const only = options.quick
    ? [QUICK.label]
    : process.env.AIR_BENCH_SCALE_CASES?.split(";").map((s) => s.trim());
  const ran = cases.filter((c) => !only || only.includes(c.label)).map((c) => c.label);
  const left = cases.map((c) => c.label).filter((l) => !ran.includes(l));
  const turns = options.quick ? QUICK.turns : TURNS;
  const workerMs = options.quick ? QUICK.workerMs : WORKER_TIMEOUT_MS;
  process.stderr.write(
    `[scale] cases: ${ran.join("; ")} (${turns} turns per rollout)${left.length ? `; left out: ${left.join("; ")}` : ""}${options.quick ? " (--quick)" : ""}\n`,
  );
  const rows = new Map<string, Row[]>();
  const sims: SimServerProcess[] = [];
  try {
    for (let i = 0; i < SERVERS; i++) {
      sims.push(
        await spawnSimServer({
          model: "sim",
          latency: LLM,
          seed: 21 + i,
          completionTokens: COMPLETION_TOKENS,
          maxModelLen: 1_000_000,
        }),
      );
    }
    for (let rep = 0; rep < r; rep++) {
      for (const c of cases) {
        if (rep >= c.repeats || (only && !only.includes(c.label))) continue;
        const input: ScaleInput = {
          baseUrls: sims.map((s) => s.baseUrl),
          inFlight: c.inFlight,
          maxTurns: turns,
          llm: LLM,
          env: ENV,
          completionTokens: COMPLETION_TOKENS,
          observationChars: c.observationChars,
          taskChars: TASK_CHARS,
          strategy: "interleaved",
          seed: 300 + rep,
          maxModelLen: c.maxModelLen,
        };
        const cpu0 = sims.map((s) => procCpuMs(s.pid));
        const tokenize0 = await tokenizeRequests(sims);
        let sample: ScaleSample;
        try {
          sample = await runWorker<ScaleSample>(WORKER, input, workerMs, {
            BUN_CONFIG_MAX_HTTP_REQUESTS: String(Math.max(256, c.inFlight * 2)),
          });
        } catch (error) {
          // A case that cannot finish on this machine is a row that says so, not a lost benchmark.
          sample = failedSample(
            c.inFlight,
            error instanceof Error ? error.message.slice(0, 200) : String(error),
          );
        }
        const serverCpu = sims.reduce((a, s, i) => a + procCpuMs(s.pid) - (cpu0[i] ?? 0), 0);
        process.stderr.write(
          `[scale] ${c.label} rep ${rep + 1}: ${fmt(sample.throughput)} of ${fmt(sample.bound)} turns/s, ` +
            `${fmt(sample.cpuMsPerTurn)} ms CPU/turn, heap ${fmt(sample.heapPerRolloutKb)} KiB/rollout ` +
            `(goal ${fmt(sample.goalPerRolloutKb)}) (${sample.status})\n`,
        );
        const row: Row = {
          ...sample,
          serverCpuMsPerTurn: serverCpu / Math.max(1, sample.turns),
          tokenizePerTurn: ((await tokenizeRequests(sims)) - tokenize0) / Math.max(1, sample.turns),
        };
        if (rep === 0)
          row.floorCpuMsPerRequest = await floorCpu(
            input,
            c.inFlight,
            options.quick ? QUICK.floorMs : WORKER_TIMEOUT_MS,
          );
        rows.set(c.label, [...(rows.get(c.label) ?? []), row]);
      }
    }
  } finally {
    for (const s of sims) await s.stop();
  }
  return scaleReport(rows, { ...options, turns, left });
}

/** `POST /tokenize` requests the sim servers answered so far (the policy checking prompts against the window). */
async function tokenizeRequests(sims: SimServerProcess[]): Promise<number> {
  const stats = await Promise.all(sims.map((s) => s.stats()));
  return stats.reduce((a, s) => a + s.tokenizeRequests, 0);
}

/** The bare client's CPU per request for the case's requests (`scale-floor-worker.ts`); NaN when it failed. */
async function floorCpu(input: ScaleInput, inFlight: number, timeoutMs: number): Promise<number> {
  try {
    const floor = await runWorker<FloorSample>(FLOOR_WORKER, input, timeoutMs, {
      BUN_CONFIG_MAX_HTTP_REQUESTS: String(Math.max(256, inFlight * 2)),
    });
    process.stderr.write(
      `[scale] bare client, ${inFlight} in flight: ${fmt(floor.cpuMsPerRequest)} ms CPU/request ` +
        `(requests of ${fmt(floor.requestChars)} characters, answers of ${fmt(floor.answerChars)})\n`,
    );
    return floor.cpuMsPerRequest;
  } catch (error) {
    process.stderr.write(`[scale] bare client failed: ${error instanceof Error ? error.message : error}\n`);
    return Number.NaN;
  }
}
