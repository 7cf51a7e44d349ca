import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { EnvState } from "@air/core";
import { SnapshotStore } from "@air/sandbox";
import { parseState } from "./session-state.ts";
import { removeTestRunDirs } from "./testing/context.ts";
import { exampleOf } from "./testing/script.ts";
import { makeEnv } from "./testing/suite.ts";

afterAll(removeTestRunDirs);

/** Tree rollouts with durable states (`rl --resume` of `[orchestrator.tree]`): each node's snapshots under its id. */
test("a fork named by its tree node stores its snapshots under that id; a restored session forks too", async () => {
  const first = await makeEnv("local", `air-test-tree-state-${process.pid}`);
  const example = await exampleOf(first.env, "apartmentRent");
  const signal = new AbortController().signal;
  const store = new SnapshotStore(join(first.ctx.runDir, "snapshots"));
  let state: EnvState;
  try {
    const root = await first.env.open(example, { rolloutId: "s0-r0", signal });
    await root.start();
    await root.step({ text: "", command: "echo a > a.txt" });
    await root.saveState!(0);
    const child = await root.fork!({ rolloutId: "s0-r1" });
    await root.close();
    await child.step({ text: "", command: "echo b > b.txt && cd data" });
    state = JSON.parse(JSON.stringify(await child.saveState!(1))) as EnvState;
    await child.close(); // killed: no dropState
    expect((await store.list()).map((h) => h.id).sort()).toEqual(["s0-r0-t0", "s0-r1-t1"]);
    // what a resume keeps of the tree's recorded nodes: both ids
    await first.env.keepStates!(["s0-r0", "s0-r1"]);
    expect((await store.list()).map((h) => h.id).sort()).toEqual(["s0-r0-t0", "s0-r1-t1"]);
    // the root branched: a resume takes it as recorded and drops its states by id once its step is trained
    await first.env.dropStates!(["s0-r0"]);
    expect((await store.list()).map((h) => h.id)).toEqual(["s0-r1-t1"]);
  } finally {
    await first.env.close?.();
  }

  // a new process restores the child and, at its next branch point, forks it
  const second = await makeEnv("local", `air-test-tree-state2-${process.pid}`);
  const store2 = new SnapshotStore(join(second.ctx.runDir, "snapshots"));
  try {
    const restored = await second.env.restore!(example, { rolloutId: "s0-r1", signal, state });
    const grandchild = await restored.fork!({ rolloutId: "s0-r2" });
    await restored.step({ text: "", command: "echo c > ../c.txt" });
    const seen = await grandchild.step({
      text: "",
      command: "pwd; cat ../a.txt ../b.txt; ls .. | grep -c c.txt",
    });
    expect(seen.observation).toStartWith("/home/agent/workspace/data\na\nb\n0\n");
    await grandchild.saveState!(2);
    expect((await store2.list()).map((h) => h.id)).toEqual(["s0-r2-t2"]);
    await grandchild.dropState!();
    await restored.dropState!();
    await Promise.all([restored.close(), grandchild.close()]);
    // each node's drop takes its own snapshots only (the restored one's in the store it came from too)
    expect(await store.list()).toEqual([]);
    expect(await store2.list()).toEqual([]);
    expect(parseState(state).snapshot.id).toBe("s0-r1-t1");
  } finally {
    await second.env.close?.();
  }
}, 180_000);
