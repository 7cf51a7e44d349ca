import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Table } from "../report.ts";
import { checkStore, startRl, trainCheck } from "./faults-run.ts";
import { freePort, markedProcesses, progressStep, readPidFile, removeRun, until } from "./faults-util.ts";

/**
 * `kill -9` of everything of a run mid-step (launcher, reaper, children), then `rl --resume`: it must continue from
 * the last completed step and end with every step present once, in one store run, trained once.
 */
export async function killAllThenResume(steps: number): Promise<{ table: Table; goal: string }> {
  const out = mkdtempSync(join(tmpdir(), "air-bench-resume-"));
  const runDir = join(out, "q");
  try {
    const first = await startRl(out, "q", ["--run.max_steps", String(steps)]);
    await until(() => (progressStep(runDir) ?? -1) >= 1, 5 * 60_000);
    await Bun.sleep(1500);
    const killedAfterStep = progressStep(runDir) ?? -1;
    const pids = readPidFile(runDir);
    const reapers = spawnSync("pgrep", ["-f", `reaper.ts ${runDir}`], { encoding: "utf8" })
      .stdout.split("\n")
      .filter(Boolean)
      .map(Number);
    for (const pid of [...reapers, pids?.launcher.pid ?? 0, ...(pids?.children.map((c) => c.pid) ?? [])])
      if (pid > 0) spawnSync("kill", ["-9", String(pid)]);
    for (const pid of markedProcesses(runDir)) spawnSync("kill", ["-9", String(pid)]);
    await first.exited;
    const resumed = await startRl(out, "q", ["--run.max_steps", String(steps), "--resume"]);
    const resumeExit = await resumed.exited;
    const store = checkStore(runDir, 8, steps);
    const trained = trainCheck(runDir, store.stepsWithSamples);
    const rolloutsDir = join(runDir, "prime-rl", "rollouts");
    const perStep = [...store.perStep.entries()].map(([s, n]) => `${s}:${n}`).join(" ");
    return {
      table: {
        title: "kill -9 of everything mid-step (launcher, reaper, children), then `rl --resume`",
        headers: [
          "killed after step",
          "resume exit",
          "last completed step",
          "store runs",
          "trajectories per step",
          "rollouts lost / doubled",
          "steps trained twice / never",
          "batch files",
        ],
        rows: [
          [
            String(killedAfterStep),
            String(resumeExit),
            String(progressStep(runDir)),
            String(store.runs),
            perStep,
            `${store.lost} / ${store.doubled}`,
            `${trained.twice} / ${trained.never}`,
            String(existsSync(rolloutsDir) ? readdirSync(rolloutsDir).length : 0),
          ],
        ],
      },
      goal:
        `kill -9 then --resume: exit ${resumeExit} (goal 0), ${store.runs} store run(s) (goal 1), ` +
        `${store.lost} lost / ${store.doubled} doubled (goal 0 / 0), ${trained.twice} step(s) trained twice (goal 0)`,
    };
  } finally {
    removeRun(out);
  }
}

/** Forwards a request to the tiny server; resolves with its status, headers and body. */
function forward(
  port: number,
  req: IncomingMessage,
  body: Buffer,
): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  return new Promise((done, fail) => {
    const up = httpRequest(
      { host: "127.0.0.1", port, method: req.method, path: req.url, headers: req.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") headers[k] = v;
          done({ status: res.statusCode ?? 502, headers, body: Buffer.concat(chunks) });
        });
        res.on("error", fail);
      },
    );
    up.on("error", fail);
    up.end(body);
  });
}

/**
 * A fault proxy in front of the real tiny server: of the chat completions, about 10% answer 500, 5% hang past
 * `generate_ms`, 5% send the headers and half the body, then close the connection (node:http, so the close is a
 * real socket close and prints nothing). The run must finish, every step keeping its rollouts.
 */
export async function inferenceFaults(
  steps: number,
  rand: () => number,
): Promise<{ table: Table; goal: string }> {
  const out = mkdtempSync(join(tmpdir(), "air-bench-proxy-"));
  const serverPort = await freePort();
  const counts = { requests: 0, "500": 0, hang: 0, close: 0 };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    let fault: "500" | "hang" | "close" | undefined;
    if (req.url?.endsWith("/chat/completions")) {
      counts.requests++;
      const r = rand();
      fault = r < 0.1 ? "500" : r < 0.15 ? "hang" : r < 0.2 ? "close" : undefined;
      if (fault) counts[fault]++;
    }
    if (fault === "500") {
      res.writeHead(500, { "content-type": "text/plain" }).end("injected fault");
      return;
    }
    if (fault === "hang") await Bun.sleep(8000);
    const upstream = await forward(serverPort, req, body);
    if (fault === "close") {
      res.writeHead(upstream.status, { ...upstream.headers, "content-length": String(upstream.body.length) });
      res.write(upstream.body.subarray(0, Math.floor(upstream.body.length / 2)), () => res.socket?.destroy());
      return;
    }
    res.writeHead(upstream.status, upstream.headers).end(upstream.body);
  };
  const proxy = createServer((req, res) => {
    handle(req, res).catch(() => res.socket?.destroy());
  });
  await new Promise<void>((done) => proxy.listen(0, "127.0.0.1", done));
  const address = proxy.address();
  const proxyPort = typeof address === "object" && address ? address.port : 0;
  try {
    const run = await startRl(
      out,
      "q",
      [
        ...["--run.max_steps", String(steps), "--orchestrator.timeouts.generate_ms", "4000"],
        ...["--orchestrator.rollout_retries", "2", "--launcher.preflight", "false"],
      ],
      { port: serverPort, baseUrl: `http://127.0.0.1:${proxyPort}/v1` },
    );
    const exit = await run.exited;
    const store = checkStore(join(out, "q"), 8, steps);
    const perStep = [...store.perStep.values()].join(" ");
    return {
      table: {
        title:
          "Inference faults: a proxy before the real tiny server answers 500, hangs past generate_ms or closes mid-answer",
        headers: [
          "exit",
          "chat requests",
          "injected",
          "rollouts per step",
          "lost / doubled",
          "failed rollouts",
        ],
        rows: [
          [
            String(exit),
            String(counts.requests),
            `500: ${counts["500"]}, hang: ${counts.hang}, close: ${counts.close}`,
            perStep,
            `${store.lost} / ${store.doubled}`,
            String(store.failed),
          ],
        ],
      },
      goal: `inference faults: exit ${exit} (goal 0), rollouts per step ${perStep} (goal 8 each), ${store.lost} lost / ${store.doubled} doubled (goal 0 / 0)`,
    };
  } finally {
    proxy.closeAllConnections();
    proxy.close();
    removeRun(out);
  }
}
