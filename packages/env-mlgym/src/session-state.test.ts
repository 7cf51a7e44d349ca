import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type { EnvState } from "@air/core";
import { SnapshotStore, SnapshotUnavailableError } from "@air/sandbox";
import { parseState } from "./session-state.ts";
import { dockerAvailable, removeTestRunDirs } from "./testing/context.ts";
import { exampleOf } from "./testing/script.ts";
import { makeEnv } from "./testing/suite.ts";

afterAll(removeTestRunDirs);

const docker = await dockerAvailable();

/** `rl --resume` of one mlgym rollout: state saved by one env, restored by another (a new process's). */
for (const runtime of ["local", "docker"] as const) {
  describe.skipIf(runtime === "docker" && !docker)(`mlgym session state (${runtime})`, () => {
    test("a saved state comes back in a new env: files, directory, open file, step count; then pruned", async () => {
      const first = await makeEnv(runtime, `air-test-state-${runtime}-${process.pid}`);
      const example = await exampleOf(first.env, "apartmentRent");
      const signal = new AbortController().signal;
      let state: EnvState;
      try {
        const session = await first.env.open(example, { rolloutId: "s0-r0", signal });
        await session.start();
        await session.step({
          text: "",
          command:
            "mkdir -p sub && echo one > sub/f.txt && chmod 600 sub/f.txt && echo t > /tmp/t.txt && export KEPT=1 && LOST=2",
        });
        await session.step({ text: "", command: "cd sub" });
        await session.step({ text: "", command: "open f.txt" });
        state = JSON.parse(JSON.stringify(await session.saveState!(2))) as EnvState;
        expect(parseState(state).session).toMatchObject({ step: 3, cwd: "sub", openFile: "sub/f.txt" });
        await session.step({ text: "", command: "echo later > f.txt; cd .." });
        await session.close(); // no dropState: the run was killed
      } finally {
        await first.env.close?.();
      }

      const second = await makeEnv(runtime, `air-test-state2-${runtime}-${process.pid}`);
      try {
        const restored = await second.env.restore!(example, { rolloutId: "s0-r0", signal, state });
        const seen = await restored.step({ text: "", command: "pwd; cat f.txt; stat -c %a f.txt" });
        expect(seen.observation).toStartWith("/home/agent/workspace/sub\none\n600\n");
        expect(seen.observation).toContain("(Current Step: 4,");
        expect(seen.observation).toContain("(Open file: /home/agent/workspace/sub/f.txt)");
        // every runtime carries the shell's exported variables (not the others) and /tmp (packages/sandbox/README.md)
        const outside = await restored.step({ text: "", command: 'echo "[$KEPT][$LOST]"; cat /tmp/t.txt' });
        expect(outside.observation).toStartWith("[1][]\nt\n");
        await restored.dropState!();
        await restored.close();
        const { path } = parseState(state).snapshot;
        expect(existsSync(path)).toBe(false);
        expect(await new SnapshotStore(dirname(path)).list()).toEqual([]);

        // a state whose snapshot is gone cannot be restored: the loop starts that rollout over
        const again = await second.env.open(example, { rolloutId: "s0-r1", signal });
        await again.start();
        await again.step({ text: "", command: "echo x > x.txt" });
        const lost = await again.saveState!(0);
        await again.close();
        rmSync(parseState(lost).snapshot.path, { recursive: true, force: true });
        const refused = await second.env.restore!(example, { rolloutId: "s0-r1", signal, state: lost }).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(refused).toBeInstanceOf(SnapshotUnavailableError);
        expect(String(refused)).toContain("s0-r1-t0");
      } finally {
        await second.env.close?.();
      }
    }, 180_000);
  });
}

test("on resume, snapshots of rollouts that do not continue are pruned; those of the ones that do are kept", async () => {
  const { env, ctx } = await makeEnv("local", `air-test-keep-${process.pid}`);
  const example = await exampleOf(env, "apartmentRent");
  const signal = new AbortController().signal;
  try {
    for (const rolloutId of ["s1-r1", "s1-r10", "s1-r2"]) {
      const session = await env.open(example, { rolloutId, signal });
      await session.start();
      await session.step({ text: "", command: "echo x > x.txt" });
      await session.saveState!(0);
      await session.close();
    }
    const store = new SnapshotStore(join(ctx.runDir, "snapshots"));
    expect((await store.list()).map((h) => h.id).sort()).toEqual(["s1-r1-t0", "s1-r10-t0", "s1-r2-t0"]);
    await env.keepStates!(["s1-r1"]);
    expect((await store.list()).map((h) => h.id)).toEqual(["s1-r1-t0"]);
  } finally {
    await env.close?.();
  }
}, 120_000);
