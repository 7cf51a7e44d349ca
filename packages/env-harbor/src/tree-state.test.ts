import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EnvState, Example } from "@air/core";
import { makeContext } from "@air/core/testing";
import { SnapshotStore } from "@air/sandbox";
import { harborConfigSchema } from "./config.ts";
import { createHarborEnvironment } from "./plugin.ts";
import { OWN_TASKS } from "./testing/fixtures.ts";

let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "air-harbor-tree-state-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cmd = (command: string) => ({ text: command, command });
const signal = new AbortController().signal;

function harborEnv(runtime: "local" | "docker", runDir: string) {
  const config = harborConfigSchema.parse({ dataset: OWN_TASKS, tasks: ["hello-file"], runtime });
  return createHarborEnvironment(config, makeContext({ runDir, configDir: OWN_TASKS }));
}

/** Tree rollouts with durable states (`rl --resume` of `[orchestrator.tree]`) on Harbor tasks. */
for (const runtime of ["local", "docker"] as const) {
  describe(`harbor tree states (${runtime})`, () => {
    test("a fork named by its tree node stores its snapshots under that id; a restored session forks; drops by id", async () => {
      const runDir = join(dir, runtime);
      const store = new SnapshotStore(join(runDir, "snapshots"));
      const ids = async () => (await store.list()).map((h) => h.id).sort();
      const first = await harborEnv(runtime, runDir);
      const [example] = (await first.examples("train")) as [Example];
      let state: EnvState;
      try {
        const root = await first.open(example, { rolloutId: "s0-r0", signal });
        await root.start();
        await root.step(cmd("echo a > /app/a.txt"));
        await root.saveState!(0);
        const child = await root.fork!({ rolloutId: "s0-r1" });
        await root.close();
        await child.step(cmd("echo b > /app/b.txt"));
        state = JSON.parse(JSON.stringify(await child.saveState!(1))) as EnvState;
        await child.close(); // killed: no dropState
        expect(await ids()).toEqual(["s0-r0-t0", "s0-r1-t1"]);
        await first.keepStates!(["s0-r0", "s0-r1"]);
        expect(await ids()).toEqual(["s0-r0-t0", "s0-r1-t1"]);
        // the root branched: a resume takes it as recorded and drops its states by id once its step is trained
        await first.dropStates!(["s0-r0"]);
        expect(await ids()).toEqual(["s0-r1-t1"]);
      } finally {
        await first.close?.();
      }

      const second = await harborEnv(runtime, runDir);
      try {
        const restored = await second.restore!(example, { rolloutId: "s0-r1", signal, state });
        const grandchild = await restored.fork!({ rolloutId: "s0-r2" });
        await restored.step(cmd("echo c > /app/c.txt"));
        const seen = await grandchild.step(cmd("cat /app/a.txt /app/b.txt; ls /app | grep -c c.txt"));
        expect(seen.observation).toContain("a\nb\n0");
        await grandchild.saveState!(2);
        expect(await ids()).toEqual(["s0-r1-t1", "s0-r2-t2"]);
        await grandchild.dropState!();
        await restored.dropState!();
        await Promise.all([restored.close(), grandchild.close()]);
        expect(await store.list()).toEqual([]);
      } finally {
        await second.close?.();
      }
    }, 180_000);
  });
}
