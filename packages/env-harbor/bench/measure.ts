/**
 * Per-rollout cost of the harbor env on each runtime: open (container or bwrap, with the oracle's solve.sh), one
 * command, the verifier (a separate sandbox over a copy of the final state) and close, for the hello-file task.
 * Usage: bun packages/env-harbor/bench/measure.ts [--n 5]
 */
import { join } from "node:path";
import { harborConfigSchema } from "../src/config.ts";
import { HarborSandboxes, harborRuntime } from "../src/sandboxes.ts";
import { HarborSession } from "../src/session.ts";
import { loadHarborTask } from "../src/task.ts";
import { OWN_TASKS } from "../src/testing/fixtures.ts";

const n = Number(process.argv[process.argv.indexOf("--n") + 1] || 5) || 5;
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const task = await loadHarborTask(join(OWN_TASKS, "hello-file"));
const config = harborConfigSchema.parse({ dataset: OWN_TASKS, oracle: true, allow_internet: false });
const runtimes: Record<string, () => HarborSandboxes> = Object.fromEntries(
  (["docker", "local"] as const).map((kind) => [
    kind,
    () => {
      const c = { ...config, runtime: kind, docker: { ...config.docker, pids_limit: 512 } };
      const root = `/tmp/air-harbor-measure-${kind}`;
      return new HarborSandboxes(
        harborRuntime(c, { configDir: "/", runName: "/tmp/air-harbor-measure", root }),
        c,
        root,
      );
    },
  ]),
);
for (const [kind, make] of Object.entries(runtimes)) {
  const runtime = make();
  await runtime.prepare(task);
  const t = { open: [] as number[], exec: [] as number[], verify: [] as number[], close: [] as number[] };
  for (let i = 0; i < n; i++) {
    let at = performance.now();
    const lap = (k: keyof typeof t) => {
      const now = performance.now();
      t[k].push(now - at);
      at = now;
    };
    const rolloutId = `m-${kind}-${i}`;
    const box = await runtime.open(task, { rolloutId });
    const session = new HarborSession(box, task, { config, sandboxes: runtime, rolloutId });
    await session.start();
    lap("open");
    await session.step({ text: "ls", command: "ls" });
    lap("exec");
    const end = await session.step({ text: "submit", command: "submit" });
    if (end.scores?.reward !== 1) throw new Error(`unexpected ${JSON.stringify(end.scores)}`);
    lap("verify");
    await session.close();
    lap("close");
  }
  await runtime.close();
  const row = Object.entries(t).map(([k, v]) => `${k} ${p50(v).toFixed(0)} ms`);
  console.log(`${kind}: p50 of ${n}: ${row.join(", ")}`);
}
