/**
 * One pipeline measurement in a fresh process: the real loop at `inFlight` rollouts against the simulated
 * server, printing a JSON PipelineSample. Usage: bun pipeline-worker.ts '<PipelineInput JSON>'
 */
import { loadavg } from "node:os";
import { watchRss } from "../proc.ts";
import { type LatencySpec, meanLatencyMs } from "../sim/latency.ts";
import { runSimulated } from "../sim/run.ts";

export interface PipelineInput {
  baseUrl: string;
  inFlight: number;
  steps: number;
  maxTurns: number;
  llm: LatencySpec;
  env: LatencySpec;
  completionTokens: number;
  seed: number;
  sqliteLogger?: boolean;
}

export interface PipelineSample {
  inFlight: number;
  status: string;
  turns: number;
  wallS: number;
  /** Turns per second in the steady window (all slots busy). */
  throughput: number;
  /** in-flight ÷ (mean LLM latency + mean env latency), turns per second. */
  bound: number;
  windowS: number;
  peakConcurrent: number;
  cpuMsPerTurn: number;
  /** CPU the idle worker burns per second (timers, GC, the RSS sampler), measured for 1 s before the run. */
  idleCpuMsPerS: number;
  /** (CPU − idle rate × wall) ÷ turns: the CPU the turns themselves cost. */
  marginalCpuMsPerTurn: number;
  rssBaseMb: number;
  rssPeakMb: number;
  rssPerRolloutKb: number;
  /** Mean generate time per turn minus the configured mean LLM latency, ms (HTTP, policy, server). */
  generateOverheadMs: number;
  /** CPU ms of a fixed JS workload (sort + JSON round trip), best of 3: how fast this machine was then. */
  referenceCpuMs: number;
  /** The machine's 1-minute load average at the end of the run (other work shares the cores). */
  load1: number;
  /** Mean env step time per turn minus the configured mean env latency, ms (timers, event loop). */
  envOverheadMs: number;
}

const input = JSON.parse(process.argv[2] ?? "{}") as PipelineInput;
const base = {
  baseUrl: input.baseUrl,
  rolloutsPerExample: 4,
  maxOffPolicySteps: 1,
  envLatency: input.env,
  completionTokens: input.completionTokens,
  seed: input.seed,
};

await runSimulated({ ...base, inFlight: 4, batchSize: 4, steps: 1, maxTurns: 2 });
Bun.gc(true);
const rss = watchRss(50);
const rssBase = rss.base;

const idle0 = process.cpuUsage();
const idleT0 = performance.now();
await Bun.sleep(1000);
const idleUsage = process.cpuUsage(idle0);
const idleCpuMsPerS = (idleUsage.user + idleUsage.system) / 1000 / ((performance.now() - idleT0) / 1000);

const turnEnds: number[] = [];
const starts: number[] = [];
let generateMs = 0;
let envMs = 0;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const summary = await runSimulated({
  ...base,
  inFlight: input.inFlight,
  batchSize: input.inFlight,
  steps: input.steps,
  maxTurns: input.maxTurns,
  sqliteLogger: input.sqliteLogger,
  hooks: {
    "rollout:start": () => void starts.push(performance.now()),
    "turn:end": (e) => {
      turnEnds.push(performance.now());
      generateMs += e.turn.timing.generateMs;
      envMs += e.turn.timing.envMs;
    },
  },
});
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const rssPeak = rss.stop();

function referenceWorkload(): number {
  const c0 = process.cpuUsage();
  const numbers = Array.from({ length: 200_000 }, (_, i) => (i * 2654435761) % 1_000_003);
  numbers.sort((a, b) => a - b);
  const doc = { rows: numbers.slice(0, 20_000).map((n) => ({ n, s: `row-${n}` })) };
  const back = JSON.parse(JSON.stringify(doc)) as typeof doc;
  if (back.rows.length !== 20_000) throw new Error("reference workload broke");
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}
// After the run, so its allocations do not move the RSS baseline or the run's CPU.
const referenceCpuMs = Math.min(referenceWorkload(), referenceWorkload(), referenceWorkload());

const turnMs = meanLatencyMs(input.llm) + meanLatencyMs(input.env);
const windowStart = t0 + 2 * turnMs;
const windowEnd = Math.max(...starts);
const inWindow = turnEnds.filter((t) => t >= windowStart && t <= windowEnd).length;
const windowS = (windowEnd - windowStart) / 1000;
const turns = turnEnds.length;
const sample: PipelineSample = {
  inFlight: input.inFlight,
  status: summary.error ? `${summary.status}: ${summary.error}` : summary.status,
  turns,
  wallS: wallMs / 1000,
  throughput: windowS > 0 ? inWindow / windowS : Number.NaN,
  bound: input.inFlight / (turnMs / 1000),
  windowS,
  peakConcurrent: summary.peakConcurrentRollouts,
  cpuMsPerTurn: (cpu.user + cpu.system) / 1000 / Math.max(1, turns),
  idleCpuMsPerS,
  marginalCpuMsPerTurn:
    ((cpu.user + cpu.system) / 1000 - (idleCpuMsPerS * wallMs) / 1000) / Math.max(1, turns),
  rssBaseMb: rssBase / 2 ** 20,
  rssPeakMb: rssPeak / 2 ** 20,
  rssPerRolloutKb: (rssPeak - rssBase) / 1024 / input.inFlight,
  load1: loadavg()[0] ?? Number.NaN,
  referenceCpuMs,
  generateOverheadMs: generateMs / Math.max(1, turns) - meanLatencyMs(input.llm),
  envOverheadMs: envMs / Math.max(1, turns) - meanLatencyMs(input.env),
};
console.log(JSON.stringify(sample));
process.exit(0);
