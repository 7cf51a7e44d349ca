import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  exportAirAgent,
  getRun,
  groupNodes,
  openStoreReadOnly,
  readTrajectory,
  runStatus,
  SearchIndex,
  type StoreDb,
  taskSummary,
} from "@air/logger-sqlite/read";
import { type Context, Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { ComparisonView } from "./compare.ts";
import { comparePage as evalComparePage } from "./pages/compare.ts";
import { groupPage } from "./pages/group.ts";
import { replayForm } from "./pages/replay.ts";
import { flatPanel, runPage } from "./pages/run.ts";
import { runsPage } from "./pages/runs.ts";
import { systemFragment, systemPage } from "./pages/system.ts";
import { tasksPage } from "./pages/tasks.ts";
import { trajectoriesPage } from "./pages/trajectories.ts";
import { comparePage, trajectoryFacts, trajectoryPage, turnList } from "./pages/trajectory.ts";
import { runCharts, runsJson, tasksJson } from "./queries.ts";
import { addReplayRoutes, type ReplayRunner } from "./replay.ts";
import { trajectoryQuery } from "./trajectories.ts";
import { buildGroupTree } from "./tree.ts";

const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";
/** The dashboard's own files (src/static) and uPlot's, served from node_modules (no CDN). */
const STATIC: Record<string, { type: string; path: string }> = {
  "format.js": { type: JS, path: join(import.meta.dir, "static", "format.js") },
  "charts.js": { type: JS, path: join(import.meta.dir, "static", "charts.js") },
  "dashboard.js": { type: JS, path: join(import.meta.dir, "static", "dashboard.js") },
  "style.css": { type: CSS, path: join(import.meta.dir, "static", "style.css") },
  "uplot.js": { type: JS, path: Bun.resolveSync("uplot/dist/uPlot.iife.min.js", import.meta.dir) },
  "uplot.css": { type: CSS, path: Bun.resolveSync("uplot/dist/uPlot.min.css", import.meta.dir) },
};
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/** The dashboard app; `close()` closes its read-only database handle. */
export type VizApp = Hono & { close(): void; db: StoreDb };

export interface AppOptions {
  /** How often a live stream (`/api/runs/:run/events`) checks the store for changes; default 500 ms. */
  streamCheckMs?: number;
  /** A stream with nothing new sends a keep-alive this often; default 5 s. */
  keepAliveMs?: number;
  /** `eval compare` results to show at `/eval-compare` (`viz --compare a.json,b.json`). */
  comparison?: ComparisonView;
  /** Runs the trajectory page's Replay button (`bun run viz` passes `@air/replay`); without it there is no button. */
  replay?: ReplayRunner;
  /** A replay started from the dashboard is aborted after this long (default 10 minutes). */
  replayTimeoutMs?: number;
  /** Replays running at once (default 2). */
  maxReplays?: number;
  /**
   * How often the search worker looks for new turns to index once caught up (default 1 s); 0 starts no worker
   * (searches then use an index only if one exists, built by someone else).
   */
  searchIndexMs?: number;
}

/** The search worker (see search-worker.ts) and the request thread's reader of the index it writes. */
function startSearch(dbPath: string, idleMs: number) {
  let worker: Worker | undefined;
  if (idleMs > 0) {
    worker = new Worker(new URL("./search-worker.ts", import.meta.url).href, { ref: false, smol: true });
    worker.postMessage({ dbPath, idleMs });
  }
  let index: SearchIndex | null = null;
  return {
    /** The index when its file exists (searches without one scan). */
    index: () => {
      index ??= SearchIndex.open(dbPath);
      return index;
    },
    close: () => {
      worker?.terminate();
      index?.close();
    },
  };
}

function notFound(c: Context, what: string) {
  return c.text(`not found: ${what}`, 404);
}

/**
 * Builds the dashboard over one run store, opened read-only. Every page escapes stored text (hono's `html`)
 * and the CSP forbids inline scripts, so model or environment output cannot run in the browser.
 * @example
 * const app = createApp("outputs/run/air.db");
 * const res = await app.request("/runs/1/trajectories?page=2");
 */
export function createApp(dbPath: string, options: AppOptions = {}): VizApp {
  const db = openStoreReadOnly(dbPath);
  const search = startSearch(dbPath, options.searchIndexMs ?? 1000);
  const files = Object.fromEntries(Object.entries(STATIC).map(([f, s]) => [f, readFileSync(s.path, "utf8")]));
  const checkMs = options.streamCheckMs ?? 500;
  const keepAliveMs = options.keepAliveMs ?? 5000;
  const app = new Hono();
  app.use(async (c, next) => {
    await next();
    c.header("Content-Security-Policy", CSP);
    c.header("X-Content-Type-Options", "nosniff");
  });

  const run = (c: Context) => {
    const raw = c.req.param("run") ?? "";
    if (!/^\d{1,12}$/.test(raw)) return undefined;
    return getRun(db, Number(raw));
  };

  app.get("/", (c) => c.html(runsPage(db, options.comparison !== undefined)));
  app.get("/eval-compare", (c) => c.html(evalComparePage(options.comparison)));
  app.get("/static/:file", (c) => {
    const file = c.req.param("file");
    const body = files[file];
    if (body === undefined) return notFound(c, file);
    return c.body(body, 200, { "Content-Type": STATIC[file]!.type, "Cache-Control": "no-cache" });
  });
  app.get("/runs/:run", (c) => {
    const r = run(c);
    return r ? c.html(runPage(db, r)) : notFound(c, "run");
  });
  app.get("/runs/:run/tasks", (c) => {
    const r = run(c);
    return r ? c.html(tasksPage(db, r)) : notFound(c, "run");
  });
  app.get("/runs/:run/system", (c) => {
    const r = run(c);
    return r ? c.html(systemPage(db, r)) : notFound(c, "run");
  });
  app.get("/runs/:run/fragments/flat", (c) => {
    const r = run(c);
    return r ? c.html(flatPanel(db, r.id)) : notFound(c, "run");
  });
  app.get("/runs/:run/fragments/system", (c) => {
    const r = run(c);
    return r ? c.html(systemFragment(db, r.id)) : notFound(c, "run");
  });
  app.get("/runs/:run/trajectories", (c) => {
    const r = run(c);
    if (!r) return notFound(c, "run");
    const query = Object.fromEntries(Object.entries(c.req.query()).filter(([, v]) => v !== ""));
    const parsed = trajectoryQuery.safeParse(query);
    if (!parsed.success)
      return c.text(
        `bad query: ${parsed.error.issues.map((i) => `${i.path.join(".") || "?"}: ${i.message}`).join("; ")}`,
        400,
      );
    return c.html(trajectoriesPage(db, r, parsed.data, search.index()));
  });
  app.get("/runs/:run/trajectories/:rollout", (c) => {
    const r = run(c);
    if (!r) return notFound(c, "run");
    const stored = readTrajectory(db, r.id, c.req.param("rollout"));
    if (!stored) return notFound(c, "trajectory");
    const groupId = stored.trajectory.groupId;
    const tree = buildGroupTree(groupNodes(db, r.id, groupId));
    const button = options.replay && r.runDir ? replayForm(r.id, stored.trajectory.rolloutId) : undefined;
    return c.html(trajectoryPage(r, stored, tree ? { groupId, tree } : undefined, button));
  });
  app.get("/runs/:run/groups/:group", (c) => {
    const r = run(c);
    if (!r) return notFound(c, "run");
    const groupId = c.req.param("group");
    const rows = groupNodes(db, r.id, groupId);
    if (rows.length === 0) return notFound(c, "group");
    return c.html(groupPage(r, groupId, rows, buildGroupTree(rows)));
  });
  app.get("/runs/:run/fragments/facts/:rollout", (c) => {
    const r = run(c);
    if (!r) return notFound(c, "run");
    const stored = readTrajectory(db, r.id, c.req.param("rollout"));
    return stored ? c.html(trajectoryFacts(stored)) : notFound(c, "trajectory");
  });
  app.get("/runs/:run/fragments/turns/:rollout", (c) => {
    const r = run(c);
    if (!r) return notFound(c, "run");
    const stored = readTrajectory(db, r.id, c.req.param("rollout"));
    return stored ? c.html(turnList(stored)) : notFound(c, "trajectory");
  });
  app.get("/runs/:run/compare", (c) => {
    const r = run(c);
    if (!r) return notFound(c, "run");
    const a = c.req.query("a");
    const b = c.req.query("b");
    if (!a || !b) return c.text("bad query: pick two trajectories (a and b)", 400);
    const left = readTrajectory(db, r.id, a);
    const right = readTrajectory(db, r.id, b);
    if (!left || !right) return notFound(c, "trajectory");
    return c.html(comparePage(r, left, right));
  });
  app.get("/runs/:run/export.json", (c) => {
    const r = run(c);
    if (!r) return notFound(c, "run");
    c.header("Content-Disposition", `attachment; filename="run-${r.id}-trajectories.json"`);
    return c.json(exportAirAgent(db, r.id));
  });

  app.get("/api/runs", (c) => c.json(runsJson(db)));
  app.get("/api/runs/:run/status", (c) => {
    const r = run(c);
    const status = r && runStatus(db, r.id);
    return status ? c.json(status) : c.json({ error: "run not found" }, 404);
  });
  app.get("/api/runs/:run/series", (c) => {
    const r = run(c);
    return r ? c.json(runCharts(db, r.id)) : c.json({ error: "run not found" }, 404);
  });
  // Server-sent events: a "status" event (runStatus) whenever the store changed, a "ping" comment otherwise.
  app.get("/api/runs/:run/events", (c) => {
    const r = run(c);
    if (!r) return c.json({ error: "run not found" }, 404);
    return streamSSE(c, async (stream) => {
      let closed = false;
      stream.onAbort(() => {
        closed = true;
      });
      let last = "";
      let quietMs = 0;
      const tally = { trajectories: 0, lastId: 0 };
      while (!closed) {
        const status = runStatus(db, r.id, Date.now(), tally);
        if (status && status.version !== last) {
          last = status.version;
          quietMs = 0;
          await stream.writeSSE({ event: "status", data: JSON.stringify(status) });
        } else {
          quietMs += checkMs;
          if (quietMs >= keepAliveMs) {
            quietMs = 0;
            await stream.write(": keep-alive\n\n");
          }
        }
        await stream.sleep(checkMs);
      }
    });
  });
  app.get("/api/runs/:run/tasks", (c) => {
    const r = run(c);
    return r ? c.json(tasksJson(taskSummary(db, r.id))) : c.json({ error: "run not found" }, 404);
  });
  const replays = addReplayRoutes(app, run, {
    runner: options.replay,
    timeoutMs: options.replayTimeoutMs,
    maxRunning: options.maxReplays,
  });
  app.notFound((c) => notFound(c, c.req.path));
  app.onError((error, c) => c.text(`server error: ${error.message}`, 500));
  return Object.assign(app, {
    db,
    close: () => {
      replays.abortAll();
      search.close();
      db.$client.close();
    },
  });
}
