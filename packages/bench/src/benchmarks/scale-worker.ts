/**
 * One long-horizon measurement in a fresh process: the real loop with `inFlight` 30-turn rollouts whose prompts
 * grow to `contextTokens`, over several simulated servers, the sqlite logger on; prints a JSON ScaleSample.
 * Usage: bun scale-worker.ts '<ScaleInput JSON>'
 */
import { heapStats } from "bun:jsc";
import { loadavg } from "node:os";
import { watchRss } from "../proc.ts";
import { type LatencySpec, meanLatencyMs } from "../sim/latency.ts";
import { runSimulated } from "../sim/run.ts";

export interface ScaleInput {
  baseUrls: string[];
  inFlight: number;
  maxTurns: number;
  llm: LatencySpec;
  env: LatencySpec;
  completionTokens: number;
  observationChars: number;
  taskChars: number;
  strategy: "branching" | "interleaved";
  seed: number;
  /** The model's context window (`policy.max_model_len`): 8192 or 32768 as the row's context. */
  maxModelLen?: number;
}

export interface ScaleSample {
  inFlight: number;
  status: string;
  turns: number;
  wallS: number;
  /** Turns per second from 2 mean turn times after the start to the first rollout's end (all slots busy). */
  throughput: number;
  bound: number;
  cpuMsPerTurn: number;
  /** CPU per turn over the steady window only (the batch building and the final flush left out). */
  windowCpuMsPerTurn: number;
  /** Share of one core the worker used over the steady window. */
  windowCores: number;
  /** JS heap (objects + array buffers) after a full GC when the first rollout ended, minus the baseline, ÷ in-flight. */
  heapPerRolloutKb: number;
  /** 1.5 × (4 bytes × the rollout's tokens + its text), mean over the rollouts at that moment. */
  goalPerRolloutKb: number;
  /** Mean bytes (KiB) of the buffers holding a rollout's token ids and logprobs at that moment, capacity included. */
  tokenDataKb: number;
  /** Mean tokens (last prompt + completion) and characters of the conversation at that moment. */
  meanTokens: number;
  meanTextChars: number;
  rssPeakMb: number;
  rssPerRolloutKb: number;
  gcPauseMs: number;
  generateOverheadMs: number;
  load1: number;
}

const input = JSON.parse(process.argv[2] ?? "{}") as ScaleInput;
const base = {
  baseUrl: input.baseUrls,
  rolloutsPerExample: 4,
  maxOffPolicySteps: 1,
  envLatency: input.env,
  completionTokens: input.completionTokens,
  observationChars: input.observationChars,
  taskChars: input.taskChars,
  strategy: input.strategy,
  seed: input.seed,
  sqliteLogger: true,
  lastObservations: 0,
  maxModelLen: input.maxModelLen,
};

await runSimulated({ ...base, inFlight: 4, batchSize: 4, steps: 1, maxTurns: 2 });
Bun.gc(true);
const heapBase = heapStats().heapSize;
const rss = watchRss(200);
const rssBase = rss.base;

/** Per rollout: tokens of its last turn (prompt + completion) and characters of its conversation so far. */
const sizes = new Map<string, { tokens: number; chars: number; bytes: number }>();
const turnEnds: number[] = [];
let generateMs = 0;
let snapshot:
  | {
      at: number;
      cpu: NodeJS.CpuUsage;
      heap: number;
      gcMs: number;
      tokens: number;
      chars: number;
      bytes: number;
      goal: number;
    }
  | undefined;
const turnMs = meanLatencyMs(input.llm) + meanLatencyMs(input.env);
let windowCpu0: NodeJS.CpuUsage | undefined;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const windowStart = t0 + 2 * turnMs;
const summary = await runSimulated({
  ...base,
  inFlight: input.inFlight,
  batchSize: input.inFlight,
  steps: 1,
  maxTurns: input.maxTurns,
  hooks: {
    "turn:end": (e) => {
      const now = performance.now();
      turnEnds.push(now);
      generateMs += e.turn.timing.generateMs;
      if (windowCpu0 === undefined && now >= windowStart) {
        windowCpu0 = process.cpuUsage();
      }
      const t = e.turn;
      const before = sizes.get(e.rolloutId);
      const chars =
        (before?.chars ?? t.promptMessages.reduce((a, m) => a + m.content.length, 0)) +
        t.completionText.length +
        t.observation.length;
      sizes.set(e.rolloutId, {
        tokens: t.promptTokenIds.length + t.completionTokenIds.length,
        chars,
        bytes: bufferBytes(t.promptTokenIds) + bufferBytes(t.completionLogprobs),
      });
      if (snapshot === undefined && t.index === input.maxTurns - 1) snapshot = measure(now);
    },
  },
});
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const rssPeak = rss.stop();

/** Bytes of the buffer `list` views (the rollout's one buffer), or of the list itself as 8-byte numbers. */
function bufferBytes(list: ArrayLike<number>): number {
  return ArrayBuffer.isView(list) ? list.buffer.byteLength : 8 * list.length;
}

/** Heap after a full GC and the rollouts' sizes, when the first rollout ends (all others still in flight). */
function measure(at: number) {
  const cpuAt = process.cpuUsage();
  const list = [...sizes.values()];
  const tokens = list.reduce((a, s) => a + s.tokens, 0) / Math.max(1, list.length);
  const chars = list.reduce((a, s) => a + s.chars, 0) / Math.max(1, list.length);
  const bytes = list.reduce((a, s) => a + s.bytes, 0) / Math.max(1, list.length);
  const g0 = performance.now();
  Bun.gc(true);
  const heap = heapStats().heapSize;
  return {
    at,
    cpu: cpuAt,
    heap,
    gcMs: performance.now() - g0,
    tokens,
    chars,
    bytes,
    goal: 1.5 * (4 * tokens + chars),
  };
}

const ms = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
const turns = turnEnds.length;
const end = snapshot?.at ?? Math.max(...turnEnds);
const inWindow = turnEnds.filter((t) => t >= windowStart && t <= end).length;
const windowS = (end - windowStart) / 1000;
const windowCpuMs = snapshot && windowCpu0 ? ms(snapshot.cpu) - ms(windowCpu0) : Number.NaN;
const windowTurns = snapshot && windowCpu0 ? inWindow : Number.NaN;
const sample: ScaleSample = {
  inFlight: input.inFlight,
  status: summary.error ? `${summary.status}: ${summary.error}` : summary.status,
  turns,
  wallS: wallMs / 1000,
  throughput: windowS > 0 ? inWindow / windowS : Number.NaN,
  bound: input.inFlight / (turnMs / 1000),
  cpuMsPerTurn: ms(cpu) / Math.max(1, turns),
  windowCpuMsPerTurn: windowCpuMs / Math.max(1, windowTurns),
  windowCores: windowCpuMs / 1000 / windowS,
  heapPerRolloutKb: snapshot ? (snapshot.heap - heapBase) / 1024 / input.inFlight : Number.NaN,
  goalPerRolloutKb: snapshot ? snapshot.goal / 1024 : Number.NaN,
  tokenDataKb: snapshot ? snapshot.bytes / 1024 : Number.NaN,
  meanTokens: snapshot?.tokens ?? Number.NaN,
  meanTextChars: snapshot?.chars ?? Number.NaN,
  rssPeakMb: rssPeak / 2 ** 20,
  rssPerRolloutKb: (rssPeak - rssBase) / 1024 / input.inFlight,
  gcPauseMs: snapshot?.gcMs ?? Number.NaN,
  generateOverheadMs: generateMs / Math.max(1, turns) - meanLatencyMs(input.llm),
  load1: loadavg()[0] ?? Number.NaN,
};
console.log(JSON.stringify(sample));
process.exit(0);
