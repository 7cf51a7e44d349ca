import type { Context, Hono } from "hono";
import { type ReplayJob, replayPage } from "./pages/replay.ts";
import type { RunRow } from "./queries.ts";

/**
 * What the trajectory page's Replay button calls: replays a stored trajectory's commands `times` times in
 * fresh sandboxes and returns the printed report. The dashboard itself never runs sandboxes; the `viz` command
 * passes one (`@air/replay` through the launcher's built-in plugins).
 */
export type ReplayRunner = (request: {
  runDir: string;
  rolloutId: string;
  times: number;
  signal: AbortSignal;
}) => Promise<{ text: string }>;

export interface ReplayRouteOptions {
  runner?: ReplayRunner;
  /** A replay still running after this long is aborted and reported as timed out (default 10 minutes). */
  timeoutMs?: number;
  /** Most replays per button press (default 10). */
  maxTimes?: number;
  /** Replays (of different trajectories) running at once; another press answers 429 (default 2). */
  maxRunning?: number;
}

/**
 * Adds `POST /runs/:run/trajectories/:rollout/replay` (starts a replay in the background, answers 303 to the
 * status page) and `GET` of the same path (running, with a refresh; the report; or the error). One replay per
 * trajectory at a time; each is bounded by `timeoutMs`. Without a runner the POST answers 501.
 */
export function addReplayRoutes(
  app: Hono,
  run: (c: Context) => RunRow | undefined,
  options: ReplayRouteOptions,
): { running(): number; abortAll(): void } {
  const jobs = new Map<string, ReplayJob>();
  const controllers = new Map<string, AbortController>();
  const timeoutMs = options.timeoutMs ?? 600_000;
  const maxTimes = options.maxTimes ?? 10;
  const maxRunning = options.maxRunning ?? 2;
  const running = () => [...jobs.values()].filter((j) => j.state === "running").length;
  const key = (runId: number, rolloutId: string) => `${runId}\u0000${rolloutId}`;
  const path = (runId: number, rolloutId: string) =>
    `/runs/${runId}/trajectories/${encodeURIComponent(rolloutId)}/replay`;

  app.post("/runs/:run/trajectories/:rollout/replay", async (c) => {
    const r = run(c);
    if (!r) return c.text("not found: run", 404);
    const rolloutId = c.req.param("rollout");
    if (!options.runner)
      return c.text("replay is not available here: start the dashboard with `bun run viz <run dir>`", 501);
    if (!r.runDir) return c.text("this run has no run dir (an imported run): nothing to replay from", 400);
    const body = await c.req.parseBody();
    const raw = typeof body.times === "string" && body.times !== "" ? body.times : "3";
    if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > maxTimes)
      return c.text(`bad times: ${raw} (a whole number from 1 to ${maxTimes})`, 400);
    const k = key(r.id, rolloutId);
    if (jobs.get(k)?.state !== "running" && running() >= maxRunning)
      return c.text(`${running()} replays are running already; wait for one to finish`, 429);
    if (jobs.get(k)?.state !== "running") {
      const controller = new AbortController();
      const job: ReplayJob = { state: "running", times: Number(raw), startedAt: Date.now() };
      jobs.set(k, job);
      controllers.set(k, controller);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          controller.abort();
          reject(new Error(`replay timed out after ${Math.round(timeoutMs / 1000)} s (aborted)`));
        }, timeoutMs);
      });
      const work = options.runner({
        runDir: r.runDir,
        rolloutId,
        times: job.times,
        signal: controller.signal,
      });
      work.catch(() => {}); // settled below; a late failure after the timeout is not unhandled
      void Promise.race([work, timedOut])
        .then(
          (result) => Object.assign(job, { state: "done", text: result.text }),
          (error: unknown) =>
            Object.assign(job, {
              state: "failed",
              error: error instanceof Error ? error.message : String(error),
            }),
        )
        .finally(() => {
          clearTimeout(timer);
          job.endedAt = Date.now();
          controllers.delete(k);
        });
    }
    return c.redirect(path(r.id, rolloutId), 303);
  });

  app.get("/runs/:run/trajectories/:rollout/replay", (c) => {
    const r = run(c);
    if (!r) return c.text("not found: run", 404);
    const rolloutId = c.req.param("rollout");
    return c.html(
      replayPage(r, rolloutId, jobs.get(key(r.id, rolloutId)), options.runner !== undefined, maxTimes),
    );
  });

  return {
    running,
    abortAll: () => {
      for (const controller of controllers.values()) controller.abort();
    },
  };
}
