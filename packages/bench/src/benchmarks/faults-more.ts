import { Database } from "bun:sqlite";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { trackChild } from "../proc.ts";
import { CONFIG, freePort, markedProcesses, REPO, RL, readPidFile, until } from "./faults-util.ts";

/** One `rl` run of the quickstart into `out`, with extra overrides; resolves with its exit code and output. */
async function rl(
  out: string,
  extra: string[],
  timeoutMs = 10 * 60_000,
): Promise<{ code: number; log: string }> {
  const port = await freePort();
  const log = join(out, `rl-${Date.now()}.log`);
  const child = trackChild(
    Bun.spawn(
      [
        "bun",
        RL,
        CONFIG,
        ...["--run.output_dir", out, "--run.name", "q"],
        ...[
          "--inference.port",
          String(port),
          "--policy.base_url",
          JSON.stringify(`http://127.0.0.1:${port}/v1`),
        ],
        ...extra,
      ],
      { cwd: REPO, stdout: Bun.file(log), stderr: Bun.file(`${log}.err`), stdin: "ignore" },
    ),
  );
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const code = await child.exited;
  clearTimeout(timer);
  const text = (f: string) => (existsSync(f) ? readFileSync(f, "utf8") : "");
  return { code, log: `${text(log)}\n${text(`${log}.err`)}` };
}

/** Steps of the (single) store run: trajectories per step, and how many store runs there are. */
function storeSteps(runDir: string): { runs: number; perStep: Map<number, number> } {
  const db = new Database(join(runDir, "air.db"), { readonly: true });
  try {
    const runs = (db.query("SELECT COUNT(*) AS n FROM runs").get() as { n: number }).n;
    const rows = db
      .query(
        "SELECT step, COUNT(DISTINCT rollout_id) AS n FROM trajectories WHERE split IS NOT 'eval' GROUP BY step",
      )
      .all() as Array<{ step: number; n: number }>;
    return { runs, perStep: new Map(rows.map((r) => [r.step, r.n])) };
  } finally {
    db.close();
  }
}

/** prime-rl steps the tiny trainer reported (metrics.jsonl), with repeats. */
function trainedSteps(runDir: string): number[] {
  const file = join(runDir, "prime-rl", "metrics.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { step: number }).step);
}

export interface ResumeRow {
  killedAfterStep: number;
  resumeExit: number;
  lastCompletedStep: number | undefined;
  storeRuns: number;
  perStep: string;
  trainedTwice: number;
  batches: number;
}

/**
 * `kill -9` of everything of a run mid-step (launcher, reaper, children), then `rl --resume`: it must continue from
 * the last completed step and end with every step present once, in one store run, trained once.
 */
export async function killAllThenResume(steps: number): Promise<ResumeRow> {
  const out = mkdtempSync(join(tmpdir(), "air-bench-resume-"));
  const runDir = join(out, "q");
  const progress = () => {
    try {
      return (
        JSON.parse(readFileSync(join(runDir, "progress.json"), "utf8")) as { lastCompletedStep: number }
      ).lastCompletedStep;
    } catch {
      return undefined;
    }
  };
  try {
    const first = rl(out, ["--run.max_steps", String(steps)]);
    await until(() => (progress() ?? -1) >= 1, 5 * 60_000);
    await Bun.sleep(1500);
    const killedAfterStep = progress() ?? -1;
    const pids = readPidFile(runDir);
    const reapers = spawnSync("pgrep", ["-f", `reaper.ts ${runDir}`], { encoding: "utf8" })
      .stdout.split("\n")
      .filter(Boolean)
      .map(Number);
    for (const pid of [...reapers, pids?.launcher.pid ?? 0, ...(pids?.children.map((c) => c.pid) ?? [])])
      if (pid > 0) spawnSync("kill", ["-9", String(pid)]);
    for (const pid of markedProcesses(runDir)) spawnSync("kill", ["-9", String(pid)]);
    await first;
    const resumed = await rl(out, ["--run.max_steps", String(steps), "--resume"]);
    const { runs, perStep } = storeSteps(runDir);
    const trained = trainedSteps(runDir);
    const rolloutsDir = join(runDir, "prime-rl", "rollouts");
    return {
      killedAfterStep,
      resumeExit: resumed.code,
      lastCompletedStep: progress(),
      storeRuns: runs,
      perStep: [...perStep.entries()].map(([s, n]) => `${s}:${n}`).join(" "),
      trainedTwice: trained.length - new Set(trained).size,
      batches: existsSync(rolloutsDir) ? readdirSync(rolloutsDir).length : 0,
    };
  } finally {
    spawnSync("bun", [RL, "clean", out, "--grace-ms", "1000"], { cwd: REPO, stdio: "ignore" });
    rmSync(out, { recursive: true, force: true });
  }
}

export interface InferenceFaultRow {
  exit: number;
  requests: number;
  injected: string;
  perStep: string;
  failedRollouts: number;
}

/**
 * A fault proxy in front of the real tiny server: of the chat completions, about 10% answer 500, 5% hang past
 * `generate_ms`, 5% close the connection mid-answer. The run must finish, every step keeping its rollouts.
 */
export async function inferenceFaults(steps: number, rand: () => number): Promise<InferenceFaultRow> {
  const out = mkdtempSync(join(tmpdir(), "air-bench-proxy-"));
  const serverPort = await freePort();
  const counts = { requests: 0, "500": 0, hang: 0, close: 0 };
  const proxy = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const target = `http://127.0.0.1:${serverPort}${url.pathname}${url.search}`;
      const body = request.method === "GET" ? undefined : await request.arrayBuffer();
      if (url.pathname.endsWith("/chat/completions")) {
        counts.requests++;
        const r = rand();
        if (r < 0.1) {
          counts["500"]++;
          return new Response("injected fault", { status: 500 });
        }
        if (r < 0.15) {
          counts.hang++;
          await Bun.sleep(8000);
        } else if (r < 0.2) {
          counts.close++;
          const upstream = await fetch(target, { method: request.method, headers: request.headers, body });
          const text = await upstream.text();
          const half = text.slice(0, Math.floor(text.length / 2));
          const stream = new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode(half));
              controller.error(new Error("injected: connection closed"));
            },
          });
          return new Response(stream, { status: upstream.status, headers: upstream.headers });
        }
      }
      return fetch(target, { method: request.method, headers: request.headers, body });
    },
  });
  try {
    mkdirSync(out, { recursive: true });
    const base = `http://127.0.0.1:${proxy.port}/v1`;
    const run = await rl(out, [
      ...["--run.max_steps", String(steps), "--inference.port", String(serverPort)],
      ...["--policy.base_url", JSON.stringify(base), "--orchestrator.timeouts.generate_ms", "4000"],
      ...["--orchestrator.rollout_retries", "2", "--launcher.preflight", "false"],
    ]);
    const { perStep } = storeSteps(join(out, "q"));
    const db = new Database(join(out, "q", "air.db"), { readonly: true });
    const failed = (
      db
        .query("SELECT COUNT(DISTINCT rollout_id) AS n FROM trajectories WHERE stop_reason = 'failed'")
        .get() as {
        n: number;
      }
    ).n;
    db.close();
    return {
      exit: run.code,
      requests: counts.requests,
      injected: `500: ${counts["500"]}, hang: ${counts.hang}, close: ${counts.close}`,
      perStep: [...perStep.values()].join(" "),
      failedRollouts: failed,
    };
  } finally {
    proxy.stop(true);
    spawnSync("bun", [RL, "clean", out, "--grace-ms", "1000"], { cwd: REPO, stdio: "ignore" });
    rmSync(out, { recursive: true, force: true });
  }
}
