import type { BenchReport } from "../report.ts";
import { type LatencySpec, meanLatencyMs } from "../sim/latency.ts";
import { fmt, fmtSpread, spread } from "../stats.ts";
import type { BenchOptions } from "./pipeline.ts";
import type { ScaleSample } from "./scale-worker.ts";

/**
 * An 8k-context turn: a ~100-token reply. 4096 rollouts over 4 servers are ~1024 sequences per server; a decode
 * step at that batch and context takes tens of ms, so 100 tokens take seconds.
 */
export const LLM: LatencySpec = { dist: "lognormal", median_ms: 6000, spread: 0.3 };
/** An MLGym command (ls, python train.py --quick, cat) in a container. */
export const ENV: LatencySpec = { dist: "lognormal", median_ms: 1000, spread: 0.3 };
export const SERVERS = 4;
export const TURNS = 30;
export const COMPLETION_TOKENS = 100;
export const TASK_CHARS = 1500;

/** One run of a case: the worker's sample, the sim servers' CPU, and the bare client's CPU (first run only). */
export interface Row extends ScaleSample {
  serverCpuMsPerTurn: number;
  /** `/tokenize` requests per turn (prompts the policy checked against the window before sending). */
  tokenizePerTurn: number;
  floorCpuMsPerRequest?: number;
}

/** The section of BENCHMARKS.md for `bench scale` (benchmark 12) from its rows. */
export function scaleReport(
  rows: Map<string, Row[]>,
  options: BenchOptions & { turns: number; left: string[] },
): BenchReport {
  const s = (list: Row[], f: (r: Row) => number) => fmtSpread(spread(list.map(f)));
  const median = (label: string, f: (r: Row) => number) => spread((rows.get(label) ?? []).map(f)).median;
  const table = {
    headers: [
      "in-flight, context",
      "runs",
      "turns/run",
      "throughput (turns/s)",
      "ideal bound",
      "ratio (goal ≥0.95 at 4096)",
      "orchestrator CPU ms/turn, whole run (goal ≤0.3)",
      "CPU ms/turn, steady window",
      "bare client CPU ms/request (same requests, no loop)",
      "orchestrator ÷ bare client",
      "cores used, steady window",
      "sim servers' CPU ms/turn (4 processes)",
      "/tokenize requests per turn",
      "heap per in-flight rollout (KiB)",
      "goal: 1.5 × (4 B × tokens + text) (KiB)",
      "heap ÷ goal (goal ≤1)",
      "of the heap: token ids + logprobs buffers (KiB)",
      "mean tokens, text chars per rollout",
      "peak RSS (MiB)",
      "generate overhead ms/turn",
      "machine load (1 min)",
    ],
    rows: [...rows.entries()].map(([label, list]) => [
      label,
      String(list.length),
      String(list[0]?.turns ?? 0),
      s(list, (x) => x.throughput),
      fmt(list[0]?.bound ?? Number.NaN),
      s(list, (x) => x.throughput / x.bound),
      s(list, (x) => x.cpuMsPerTurn),
      s(list, (x) => x.windowCpuMsPerTurn),
      fmt(floorOf(list)),
      fmt(spread(list.map((x) => x.cpuMsPerTurn)).median / floorOf(list)),
      s(list, (x) => x.windowCores),
      s(list, (x) => x.serverCpuMsPerTurn),
      s(list, (x) => x.tokenizePerTurn),
      s(list, (x) => x.heapPerRolloutKb),
      s(list, (x) => x.goalPerRolloutKb),
      s(list, (x) => x.heapPerRolloutKb / x.goalPerRolloutKb),
      s(list, (x) => x.tokenDataKb),
      `${fmt(median(label, (x) => x.meanTokens))}, ${fmt(median(label, (x) => x.meanTextChars))}`,
      s(list, (x) => x.rssPeakMb),
      s(list, (x) => x.generateOverheadMs),
      s(list, (x) => x.load1),
    ]),
  };
  const ratio = median("4096, 8k", (x) => x.throughput / x.bound);
  const cpu1024 = median("1024, 8k", (x) => x.cpuMsPerTurn);
  const cpu4096 = median("4096, 8k", (x) => x.cpuMsPerTurn);
  const floor = (label: string) => fmt(floorOf(rows.get(label) ?? []));
  const mem = median("1024, 8k", (x) => x.heapPerRolloutKb / x.goalPerRolloutKb);
  const heap8k = median("1024, 8k", (x) => x.heapPerRolloutKb);
  const verdict = (ok: boolean) => (ok ? "met" : "missed");
  // Each goal with the case it reads: a case not run (--quick) has no goal line.
  const goals: Array<[string, string]> = [
    [
      "4096, 8k",
      `throughput ≥ 0.95 × bound at 4096 in flight over 4 servers (8k contexts): **${fmt(ratio)}** — ${verdict(ratio >= 0.95)}`,
    ],
    [
      "1024, 8k",
      `orchestrator CPU ≤ 0.3 ms per turn at 1024 in flight (8k): **${fmt(cpu1024)} ms** — ${verdict(cpu1024 <= 0.3)} (a bare client's requests alone: ${floor("1024, 8k")} ms)`,
    ],
    [
      "4096, 8k",
      `orchestrator CPU ≤ 0.3 ms per turn at 4096 in flight (8k): **${fmt(cpu4096)} ms** — ${verdict(cpu4096 <= 0.3)} (a bare client's requests alone: ${floor("4096, 8k")} ms)`,
    ],
    [
      "1024, 8k",
      `heap per in-flight rollout at 8k contexts ≤ 1.5 × (4 B × tokens + text): **${fmt(mem)}×** of it ` +
        `(${fmt(heap8k)} KiB; 10,000 rollouts ≈ ${fmt((heap8k * 10_000) / 2 ** 20)} GiB, goal ≤ 2) — ${verdict(mem <= 1)}`,
    ],
  ];
  return {
    name: "scale",
    title: "12. Internet scale, simulated",
    command: options.quick
      ? "bun run bench scale --quick --write"
      : "bun run bench scale --timeout-s 2700 --write",
    tables: [table],
    goals: goals.filter(([label]) => rows.has(label)).map(([, goal]) => goal),
    notes: [
      ...(options.left.length > 0
        ? [
            `Cases run: ${[...rows.keys()].join("; ")}, ${options.turns} turns per rollout; left out: ${options.left.join("; ")}${options.quick ? " (--quick: a smoke check, not the section's figures)" : ""}.`,
          ]
        : []),
      `Setup: the real loop (\`startRun\`, \`openai\` policy with \`base_url\` a list of ${SERVERS} simulated vLLM ` +
        `servers, each its own process; grpo, \`interleaved\` strategy, trainer \`none\`, the sqlite logger ` +
        `recording into the run's air.db) with batch_size = in-flight = max_concurrent_rollouts, ${options.turns} turns ` +
        `per rollout, one step, BUN_CONFIG_MAX_HTTP_REQUESTS = 2 × in-flight. Each turn: a ${COMPLETION_TOKENS}-token ` +
        `reply (LLM latency ${LLM.dist} median ${LLM.median_ms} ms, σ ${LLM.spread}, mean ` +
        `${fmt(meanLatencyMs(LLM))} ms), then an observation of 600 characters (8k rows) or 3,850 (32k rows) ` +
        `(env latency median ${ENV.median_ms} ms, mean ${fmt(meanLatencyMs(ENV))} ms); the task prompt is ` +
        `${TASK_CHARS} characters; each observation is a string of its own, as a real env's output is. The policy's ` +
        "`max_model_len` is the row's context (8192, 32768), so it checks each prompt against the window as it " +
        "would against a real model's (the /tokenize column). The sim servers render prompts like a chat template " +
        "(role token, content " +
        "ids, end token per message), so a rollout's prompts share their prefix token for token, as vLLM's do.",
      "Throughput is counted from 2 mean turn times after the start to the moment the first rollout ends (all " +
        "slots busy until then); bound = in-flight ÷ (mean LLM + mean env latency). CPU per turn (whole run) is the " +
        "worker's user+system CPU ÷ turns, including the batch (advantages, samples) and the store's last flush; " +
        "the steady-window figure leaves those out. Heap per rollout: when the first rollout ends, a full GC, then " +
        "the JS heap (objects and array buffers, `bun:jsc` heapStats) minus the heap after the warm-up run, ÷ " +
        "in-flight — everything the orchestrator holds per rollout (trajectory, token ids, logprobs, messages, " +
        "pending requests, the logger's queue). Its goal is 1.5 × (4 bytes × the rollout's tokens + its " +
        "conversation's characters) at that moment.",
      "The bare client (`scale-floor-worker.ts`, run once per case right after its first run, against the same " +
        `sim servers): as many clients as the case has rollouts, each playing the same ${options.turns} turns with the request ` +
        "the `openai` policy sends (the whole conversation, vLLM's sampling fields, `return_token_ids`) and the " +
        "answer read with `JSON.parse` — no loop, policy checks, store or strategy. Its CPU per request is what one " +
        "HTTP request per turn costs in Bun; a CPU goal below it cannot be met by an orchestrator that sends the " +
        "conversation each turn and reads vLLM's answer, whatever else it does.",
      limitsNote(rows),
      ...failedNote(rows),
    ],
  };
}

/** The bare client's CPU per request, measured with a case's first run. */
function floorOf(list: Row[]): number {
  return list.find((r) => r.floorCpuMsPerRequest !== undefined)?.floorCpuMsPerRequest ?? Number.NaN;
}

export function failedSample(inFlight: number, status: string): ScaleSample {
  const nan = Number.NaN;
  return {
    inFlight,
    status,
    turns: 0,
    wallS: nan,
    throughput: nan,
    bound: nan,
    cpuMsPerTurn: nan,
    windowCpuMsPerTurn: nan,
    windowCores: nan,
    heapPerRolloutKb: nan,
    tokenDataKb: nan,
    goalPerRolloutKb: nan,
    meanTokens: nan,
    meanTextChars: nan,
    rssPeakMb: nan,
    rssPerRolloutKb: nan,
    gcPauseMs: nan,
    generateOverheadMs: nan,
    load1: nan,
  };
}

function failedNote(rows: Map<string, Row[]>): string[] {
  const failed = [...rows.entries()].flatMap(([label, list]) =>
    list.filter((r) => r.status !== "completed").map((r) => `${label}: ${r.status}`),
  );
  return failed.length > 0 ? [`Runs that did not complete: ${failed.join("; ")}`] : [];
}

/** How much of a turn's CPU the HTTP request alone costs (the bare client), per case. */
function floorNote(rows: Map<string, Row[]>): string {
  const parts = [...rows.entries()].flatMap(([label, list]) => {
    const floor = floorOf(list);
    const cpu = spread(list.map((r) => r.cpuMsPerTurn)).median;
    return Number.isFinite(floor)
      ? [`${label}: ${fmt(floor)} of ${fmt(cpu)} ms (${fmt((100 * floor) / cpu)}%)`]
      : [];
  });
  if (parts.length === 0) return "";
  return (
    `The request alone (the bare client: Bun's fetch, the request's JSON, JSON.parse of the answer, which carries ` +
    `every prompt token id each turn as vLLM's return_token_ids does) costs ${parts.join("; ")} of a turn's CPU; ` +
    "it grows with the context."
  );
}

/** Why turns waited beyond the simulated latency, when some waited long (the machine shared with other work). */
function lateNote(rows: Map<string, Row[]>): string {
  const late = [...rows.values()].flat().some((r) => r.generateOverheadMs > 100);
  return late
    ? "Where turns waited long beyond the simulated latency while the orchestrator used a fraction of a core, the " +
        "machine's other work (the load average column, 2 cores) left each process that share, so the sims' " +
        "timers and the orchestrator's event loop ran late; that shows as generate overhead, not orchestrator CPU. "
    : "";
}

/** What each case needed at its bound, in cores, against what it got: where a core saturates. */
function limitsNote(rows: Map<string, Row[]>): string {
  const median = (list: Row[], f: (r: Row) => number) => spread(list.map(f)).median;
  const parts = [...rows.entries()].map(([label, list]) => {
    const c = median(list, (r) => r.cpuMsPerTurn);
    const bound = median(list, (r) => r.bound);
    return (
      `${label}: the orchestrator needs ${fmt((c * bound) / 1000)} core at the bound ` +
      `(${fmt(c)} ms × ${fmt(bound)} turns/s) and the sim servers ${fmt((median(list, (r) => r.serverCpuMsPerTurn) * bound) / 1000)}; ` +
      `it used ${fmt(median(list, (r) => r.windowCores))} core in the steady window, and each turn waited ` +
      `${fmt(median(list, (r) => r.generateOverheadMs))} ms beyond the simulated latency`
    );
  });
  const c = spread(
    [...rows.values()]
      .flat()
      .filter((r) => r.status === "completed" && r.meanTokens < 10_000)
      .map((r) => r.cpuMsPerTurn),
  ).median;
  return (
    `What limits throughput: ${parts.join("; ")}. ${lateNote(rows)}` +
    `One core does 1000 ÷ ${fmt(c)} ≈ ${fmt(1000 / c)} turns/s at 8k contexts, so it saturates at about ` +
    `${fmt((1000 / c) * 7.3)} rollouts in flight with this benchmark's 7.3 s turns (docs/SCALING.md). ${floorNote(rows)}`
  );
}
