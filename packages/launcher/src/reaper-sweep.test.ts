import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DOCKER_HOSTS_FILE } from "./containers.ts";
import { isAlive } from "./proc.ts";
import { startReaper } from "./reaper.ts";
import { removeTempDirs, tempDir } from "./test-helpers.ts";

afterAll(removeTempDirs);

/**
 * A Docker Engine API stand-in on a unix socket: /_ping, GET /containers/json (every container labelled with the
 * run, as dockerode asks with its label filter) and DELETE /containers/<id>, which it records.
 */
function fakeEngine(socket: string, runDir: string, ids: string[]) {
  const deleted: string[] = [];
  const server = Bun.serve({
    unix: socket,
    fetch(request) {
      const url = new URL(request.url);
      if (url.pathname.endsWith("/_ping")) return new Response("OK");
      if (url.pathname.endsWith("/containers/json")) {
        const filters = JSON.parse(url.searchParams.get("filters") ?? "{}") as { label?: string[] };
        const mine = filters.label?.includes(`air.run=${runDir}`);
        return Response.json(mine ? ids.filter((id) => !deleted.includes(id)).map((Id) => ({ Id })) : []);
      }
      const m = /\/containers\/([^/]+)$/.exec(url.pathname);
      if (request.method === "DELETE" && m?.[1]) {
        deleted.push(m[1]);
        return new Response(null, { status: 204 });
      }
      return new Response("not here", { status: 404 });
    },
  });
  return { deleted, stop: () => server.stop(true) };
}

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await Bun.sleep(100);
  }
  return check();
}

// The launcher's teardown could not reach the engine (dockerd restarting): a container of the run stayed behind
// for good. The reaper now keeps sweeping until the engine answers again.
test("containers an engine held while it did not answer are removed by the reaper once it answers", async () => {
  const dir = tempDir("sweep");
  const runDir = join(dir, "run");
  mkdirSync(join(runDir, "logs"), { recursive: true });
  const socket = join(dir, "engine.sock");
  writeFileSync(join(runDir, DOCKER_HOSTS_FILE), JSON.stringify([{ url: `unix://${socket}` }]));
  const reaper = startReaper(runDir, 1000, 60_000);
  let engine: ReturnType<typeof fakeEngine> | undefined;
  try {
    reaper.handOffContainers();
    await Bun.sleep(3000); // the engine is down for a while: the reaper's first sweeps find nobody there
    expect(existsSync(socket)).toBe(false);
    engine = fakeEngine(socket, runDir, ["c0ffee000001", "c0ffee000002"]);
    const removed = engine;
    expect(await until(() => removed.deleted.length === 2, 30_000)).toBe(true);
    expect(removed.deleted.sort()).toEqual(["c0ffee000001", "c0ffee000002"]);
    const log = readFileSync(join(runDir, "logs", "reaper.log"), "utf8");
    expect(log).toContain("ended with containers it could not remove");
    expect(log).toContain("removed container c0ffee000001");
  } finally {
    engine?.stop();
    if (reaper.pid > 0 && isAlive(reaper.pid)) process.kill(reaper.pid, "SIGKILL");
  }
}, 60_000);
