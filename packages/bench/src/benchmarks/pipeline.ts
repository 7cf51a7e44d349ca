import { procCpuMs, runWorker, spawnSimServer } from "../proc.ts";
import type { BenchReport } from "../report.ts";
import { type LatencySpec, meanLatencyMs } from "../sim/latency.ts";
import { fmt, fmtSpread, spread } from "../stats.ts";
import type { PipelineInput, PipelineSample } from "./pipeline-worker.ts";

export interface BenchOptions {
  /** Fewer repeats (for a smoke check). */
  quick: boolean;
}

const LLM: LatencySpec = { dist: "lognormal", median_ms: 400, spread: 0.3 };
const ENV: LatencySpec = { dist: "lognormal", median_ms: 100, spread: 0.3 };
const WORKER = `${import.meta.dir}/pipeline-worker.ts`;
const RAISED = "4096";

interface Case {
  label: string;
  inFlight: number;
  steps: number;
  maxTurns: number;
  repeats: number;
  /** BUN_CONFIG_MAX_HTTP_REQUESTS for the orchestrator process (unset: Bun's default of 256). */
  fetchLimit?: string;
  sqliteLogger?: boolean;
}

interface Row extends PipelineSample {
  serverCpuMsPerTurn: number;
  serverPeakInFlight: number;
}

/**
 * Benchmark 1: the real loop at 16/64/256/1024 in-flight rollouts against a simulated vLLM server (own
 * process, latency drawn from a log-normal) and a simulated env; throughput vs in-flight ÷ (LLM + env latency),
 * orchestrator CPU per turn, RSS per in-flight rollout. Each measurement runs in a fresh worker process.
 * @example const report = await pipelineBenchmark({ quick: false });
 */
export async function pipelineBenchmark(options: BenchOptions): Promise<BenchReport> {
  const r = options.quick ? 1 : 3;
  const cases: Case[] = [
    { label: "16", inFlight: 16, steps: 4, maxTurns: 4, repeats: r },
    { label: "64", inFlight: 64, steps: 4, maxTurns: 4, repeats: r },
    { label: "256", inFlight: 256, steps: 4, maxTurns: 4, repeats: r },
    { label: "256 + sqlite logger", inFlight: 256, steps: 4, maxTurns: 4, repeats: r, sqliteLogger: true },
    { label: "1024, Bun's default fetch limit", inFlight: 1024, steps: 3, maxTurns: 3, repeats: 1 },
    {
      label: `1024, BUN_CONFIG_MAX_HTTP_REQUESTS=${RAISED}`,
      inFlight: 1024,
      steps: 3,
      maxTurns: 3,
      repeats: Math.min(2, r),
      fetchLimit: RAISED,
    },
  ];
  const rows = new Map<string, Row[]>();
  const sim = await spawnSimServer({
    model: "sim",
    latency: LLM,
    seed: 11,
    completionTokens: 40,
    maxModelLen: 1_000_000,
  });
  try {
    for (let rep = 0; rep < r; rep++) {
      for (const c of cases) {
        if (rep >= c.repeats) continue;
        const input: PipelineInput = {
          baseUrl: sim.baseUrl,
          inFlight: c.inFlight,
          steps: c.steps,
          maxTurns: c.maxTurns,
          llm: LLM,
          env: ENV,
          completionTokens: 40,
          seed: 100 + rep,
          sqliteLogger: c.sqliteLogger,
        };
        await sim.resetStats();
        const cpu0 = procCpuMs(sim.pid);
        const env: Record<string, string> = c.fetchLimit
          ? { BUN_CONFIG_MAX_HTTP_REQUESTS: c.fetchLimit }
          : {};
        const sample = await runWorker<PipelineSample>(WORKER, input, 150_000, env);
        const serverCpuMsPerTurn = (procCpuMs(sim.pid) - cpu0) / Math.max(1, sample.turns);
        const serverPeakInFlight = (await sim.stats()).peakInFlight;
        process.stderr.write(
          `[pipeline] ${c.label} rep ${rep + 1}: ${fmt(sample.throughput)} turns/s of ${fmt(sample.bound)} (${sample.status})\n`,
        );
        rows.set(c.label, [
          ...(rows.get(c.label) ?? []),
          { ...sample, serverCpuMsPerTurn, serverPeakInFlight },
        ]);
      }
    }
  } finally {
    await sim.stop();
  }
  return pipelineReport(rows, options);
}

function pipelineReport(rows: Map<string, Row[]>, options: BenchOptions): BenchReport {
  const s = (list: Row[], f: (r: Row) => number) => fmtSpread(spread(list.map(f)));
  const table = {
    headers: [
      "in-flight",
      "runs",
      "turns/run",
      "throughput (turns/s)",
      "ideal bound",
      "ratio (goal ≥0.95 at 256)",
      "orchestrator CPU ms/turn (goal ≤1)",
      "idle CPU ms/s",
      "marginal CPU ms/turn",
      "sim-server CPU ms/turn",
      "server peak requests in flight",
      "RSS per in-flight rollout (KiB)",
      "peak RSS (MiB)",
      "generate overhead ms/turn",
      "env overhead ms/turn",
      "machine load (1 min)",
      "reference workload CPU ms",
    ],
    rows: [...rows.entries()].map(([label, list]) => [
      label,
      String(list.length),
      String(list[0]?.turns ?? 0),
      s(list, (r) => r.throughput),
      fmt(list[0]?.bound ?? Number.NaN),
      s(list, (r) => r.throughput / r.bound),
      s(list, (r) => r.cpuMsPerTurn),
      s(list, (r) => r.idleCpuMsPerS),
      s(list, (r) => r.marginalCpuMsPerTurn),
      s(list, (r) => r.serverCpuMsPerTurn),
      s(list, (r) => r.serverPeakInFlight),
      s(list, (r) => r.rssPerRolloutKb),
      s(list, (r) => r.rssPeakMb),
      s(list, (r) => r.generateOverheadMs),
      s(list, (r) => r.envOverheadMs),
      s(list, (r) => r.load1),
      s(list, (r) => r.referenceCpuMs),
    ]),
  };
  const at256 = rows.get("256") ?? [];
  const ratio = spread(at256.map((r) => r.throughput / r.bound)).median;
  const cpu = spread(at256.map((r) => r.cpuMsPerTurn)).median;
  const failed = [...rows.values()].flat().filter((r) => r.status !== "completed");
  return {
    name: "pipeline",
    title: "1. Pipeline efficiency",
    command: `bun run bench pipeline${options.quick ? " --quick" : ""} --write`,
    tables: [table],
    goals: [
      `throughput ≥ 0.95 × bound at 256 in flight: **${fmt(ratio)}** — ${ratio >= 0.95 ? "met" : "missed"}`,
      `orchestrator CPU ≤ 1 ms per turn (at 256 in flight): **${fmt(cpu)} ms** — ${cpu <= 1 ? "met" : "missed"}`,
    ],
    notes: [
      `Setup: the real loop (\`startRun\`: scheduler, \`openai\` policy (its own fetch-based chat-completions client), grpo, branching, ` +
        `trainer \`none\`, no logger except in the "+ sqlite logger" row, which records the run into a ` +
        `temp air.db as a real run does) against a simulated vLLM server in its own process (real HTTP on 127.0.0.1, ` +
        `vLLM's token-id fields, ${LLM.dist} latency median ${LLM.median_ms} ms, σ ${LLM.spread}, mean ` +
        `${fmt(meanLatencyMs(LLM))} ms, 40 completion tokens) and a simulated env (${ENV.dist} step latency median ` +
        `${ENV.median_ms} ms, σ ${ENV.spread}, mean ${fmt(meanLatencyMs(ENV))} ms). batch_size = in-flight = ` +
        `max_concurrent_rollouts = the policy's max_concurrent_requests, 4 rollouts per example, ` +
        `max_off_policy_steps 1. Each run is a fresh process (a small warm-up run first, then the measured run).`,
      "Throughput is counted in the steady window: from 2 mean turn times after the start (all slots filled) " +
        "to the last rollout start (after it, slots drain). Bound = in-flight ÷ (mean LLM + mean env latency); " +
        "a ratio slightly above 1 is sampling noise (the latencies drawn in a window can average below the " +
        "distribution's mean). " +
        "CPU per turn is the worker's user+system CPU over the whole measured run ÷ turns (timers and GC " +
        "included; the goal is judged at 256, where the loop is busiest). Idle CPU is the " +
        "worker's burn rate during 1 s of idling before the run; marginal CPU per turn = (CPU − idle rate × " +
        "wall) ÷ turns, the cost of a turn itself. The sim server's CPU is read from /proc and reported " +
        "apart. RSS per rollout = (peak RSS − RSS after warm-up) ÷ in-flight. Overheads are the mean measured " +
        "generate/env time per turn minus the configured mean latency. The reference workload (a fixed sort and " +
        "JSON round trip, best of 3, in each worker after its run) shows how fast the shared machine was during each run: " +
        "CPU figures of runs taken at different times compare only after scaling by it.",
      profileNote(rows),
      limitsNote(rows),
      ...(failed.length > 0 ? [`Runs that did not complete: ${failed.map((f) => f.status).join("; ")}`] : []),
    ],
  };
}

function limitsNote(rows: Map<string, Row[]>): string {
  const median = (label: string, f: (r: Row) => number) => spread((rows.get(label) ?? []).map(f)).median;
  const defaultLabel = [...rows.keys()].find((k) => k.includes("default"));
  const raisedLabel = [...rows.keys()].find((k) => k.includes("BUN_CONFIG"));
  if (!defaultLabel || !raisedLabel) return "";
  const ratio = (r: Row) => r.throughput / r.bound;
  return (
    `What limits 1024 in flight: Bun's \`fetch\` (which the policy uses) sends at most 256 requests at ` +
    `once per process unless \`BUN_CONFIG_MAX_HTTP_REQUESTS\` is raised; the rest wait inside fetch, which shows ` +
    `as generate overhead (${fmt(median(defaultLabel, (r) => r.generateOverheadMs))} ms/turn) and a server peak ` +
    `of ${fmt(median(defaultLabel, (r) => r.serverPeakInFlight))} requests in flight, while the orchestrator ` +
    `process is far from CPU-bound (${fmt(median(defaultLabel, (r) => r.cpuMsPerTurn))} ms CPU/turn × ` +
    `${fmt(median(defaultLabel, (r) => r.throughput))} turns/s ≈ ` +
    `${fmt((median(defaultLabel, (r) => r.cpuMsPerTurn) * median(defaultLabel, (r) => r.throughput)) / 1000)} ` +
    `core). Measured side by side with the limit raised to ${RAISED}: ratio ` +
    `${fmt(median(raisedLabel, ratio))} vs ${fmt(median(defaultLabel, ratio))}. What closes it: start the ` +
    `orchestrator's process with BUN_CONFIG_MAX_HTTP_REQUESTS ≥ max_concurrent_rollouts in its environment — ` +
    `Bun reads it at process start, so the launcher re-spawns itself with it raised when the run needs more ` +
    `(packages/launcher/src/respawn.ts) — and raise the policy's max_concurrent_requests (default 64) with ` +
    `max_concurrent_rollouts. With the limit raised, the ` +
    `orchestrator needs ${fmt(median(raisedLabel, (r) => r.cpuMsPerTurn))} ms CPU per turn, i.e. ` +
    `${fmt((median(raisedLabel, (r) => r.cpuMsPerTurn) * median(raisedLabel, (r) => r.bound)) / 1000)} core at the ` +
    `bound, plus ${fmt((median(raisedLabel, (r) => r.serverCpuMsPerTurn) * median(raisedLabel, (r) => r.bound)) / 1000)} ` +
    "core for the sim server, on 2 cores shared with other work" +
    (median(raisedLabel, ratio) >= 0.95
      ? "."
      : "; the remaining gap and its spread between repeats follow the machine's load (event-loop delay shows " +
        "up as generate and env overhead), not a limit of the loop.")
  );
}

function profileNote(rows: Map<string, Row[]>): string {
  const median = (label: string, f: (r: Row) => number) => spread((rows.get(label) ?? []).map(f)).median;
  const cpu = (label: string) => fmt(median(label, (r) => r.cpuMsPerTurn));
  const corePct = fmt((median("16", (r) => r.cpuMsPerTurn) * median("16", (r) => r.throughput)) / 10);
  return (
    `Per-turn CPU falls as concurrency rises (${cpu("16")} ms at 16, ${cpu("64")} at 64, ${cpu("256")} at 256 in ` +
    "flight): fixed per-wake-up costs of the event loop and the HTTP client are shared by more turns; at 16 in " +
    `flight the whole loop uses ${corePct}% of one core, so it limits nothing. Where a turn's CPU goes (a ` +
    "`bun --cpu-prof` profile of a long-context worker, benchmark 11): Bun's `fetch` and `JSON.parse` of the " +
    "answer (vLLM returns every prompt token id each turn) are most of it; the loop, the MLGym command parser " +
    "and the sqlite logger's rows a few percent each."
  );
}
