import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EnvSession, EnvState, Example } from "@air/core";
import { makeContext } from "@air/core/testing";
import { dockerClient, labelledContainers } from "@air/sandbox";
import { harborConfigSchema } from "./config.ts";
import { createHarborEnvironment } from "./plugin.ts";
import { OWN_TASKS } from "./testing/fixtures.ts";

let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "air-harbor-resume-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One bash command as the agent's reply. */
const cmd = (command: string) => ({ text: command, command });

/** A harbor env of data/harbor's hello-file on `runtime`, writing its run files under `runDir` (as `rl` does). */
function harborEnv(runtime: "local" | "docker", runDir: string) {
  const config = harborConfigSchema.parse({ dataset: OWN_TASKS, tasks: ["hello-file"], runtime });
  return createHarborEnvironment(config, makeContext({ runDir, configDir: OWN_TASKS }));
}

/** What the agent would see of the state that must survive: files with modes, the shell's directory, an owner. */
const probe = "pwd; stat -c '%n %a %U %s' /app/notes.txt /app/sub/run.sh /app/sub/secret; cat /app/notes.txt";

for (const runtime of ["local", "docker"] as const) {
  describe(`${runtime}: a Harbor session saved by one env instance is restored by another`, () => {
    test("files, modes and the working directory as they were; the agent's time used carried; snapshots pruned", async () => {
      const runDir = join(dir, runtime);
      const first = await harborEnv(runtime, runDir);
      const [example] = (await first.examples("train")) as [Example];
      const session: EnvSession = await first.open(example, {
        rolloutId: "s0-r0",
        signal: new AbortController().signal,
      });
      let state: EnvState;
      let before: string;
      try {
        await session.start();
        await session.step(cmd("mkdir -p sub && printf 'a\\nb\\n' > notes.txt && chmod 640 notes.txt"));
        expect((await session.saveState!(0)).snapshot).toMatchObject({ id: "s0-r0-t0" });
        await session.step(
          cmd(
            "printf '#!/bin/sh\\necho ran\\n' > sub/run.sh && chmod 751 sub/run.sh && touch sub/secret && chmod 600 sub/secret && cd sub",
          ),
        );
        state = await session.saveState!(1);
        before = (await session.step(cmd(probe))).observation;
        // turn 0's stays until turn 2's is stored (a kill before the store records turn 1 resumes from turn 0)
        expect((await readdir(join(runDir, "snapshots"))).filter((f) => f.endsWith(".json"))).toEqual([
          "s0-r0-t0.json",
          "s0-r0-t1.json",
        ]);
      } finally {
        await session.close();
        await first.close?.(); // the first process is gone; only the run dir's snapshots and the recorded state remain
      }
      expect(before).toContain("/app/sub\n");
      expect(before).toMatch(/notes\.txt 640 /);
      expect(before).toMatch(/run\.sh 751 /);
      expect(before).toMatch(/secret 600 /);

      const second = await harborEnv(runtime, runDir);
      try {
        const restored = await second.restore!(example, {
          rolloutId: "s0-r0",
          signal: new AbortController().signal,
          state: JSON.parse(JSON.stringify(state)) as EnvState,
        });
        try {
          // the same probe the first session answered before its process went: the same answer
          expect((await restored.step(cmd(probe))).observation).toBe(before);
          expect((await restored.step(cmd("./run.sh"))).observation).toContain("ran");
          expect(JSON.parse(JSON.stringify(await restored.saveState!(3)))).toMatchObject({
            snapshot: { id: "s0-r0-t3" },
          });
          expect((await restored.saveState!(3)).usedMs as number).toBeGreaterThanOrEqual(
            state.usedMs as number,
          );
          await restored.dropState!();
          expect((await readdir(join(runDir, "snapshots"))).filter((f) => f.endsWith(".json"))).toEqual([]);
        } finally {
          await restored.close();
        }
      } finally {
        await second.close?.();
      }
    }, 600_000);

    test("a snapshot deleted before the restore is refused, naming it; keepStates prunes those of other rollouts", async () => {
      const runDir = join(dir, `${runtime}-gone`);
      const env = await harborEnv(runtime, runDir);
      try {
        const [example] = (await env.examples("train")) as [Example];
        const signal = new AbortController().signal;
        const states: EnvState[] = [];
        for (const rolloutId of ["s1-r0", "s1-r1"]) {
          const session = await env.open(example, { rolloutId, signal });
          await session.start();
          await session.step(cmd("echo kept > kept.txt"));
          states.push(await session.saveState!(0));
          await session.close();
        }
        await rm(join(runDir, "snapshots", "s1-r0-t0.tar"), { force: true });
        await rm(join(runDir, "snapshots", "s1-r0-t0"), { recursive: true, force: true });
        const refused = env.restore!(example, { rolloutId: "s1-r0", signal, state: states[0]! });
        await expect(refused).rejects.toThrow(/snapshot s1-r0-t0 \(.*\) cannot be restored/);
        if (runtime === "docker") expect(await labelledContainers(dockerClient(), runDir)).toEqual([]);
        await env.keepStates!(["s1-r0"]);
        expect(await readdir(join(runDir, "snapshots"))).toEqual(["s1-r0-t0.json"]);
      } finally {
        await env.close?.();
      }
    }, 600_000);
  });
}
