import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import type { Table } from "../report.ts";
import { checkStore, startRl } from "./faults-run.ts";
import { removeRun, runContainers } from "./faults-util.ts";

/**
 * A docker quickstart run of `steps` steps while a killer removes a random labelled container every ~0.5–1.5 s,
 * at most `kills` times: the run must finish, every step keeps its batch of rollouts (retried or failed), none
 * is doubled, and the trainer got one batch file per step with samples.
 */
export async function containerKills(
  docker: Docker,
  image: string,
  steps: number,
  kills: number,
  rand: () => number,
): Promise<{ table: Table; goal: string }> {
  const out = mkdtempSync(join(tmpdir(), "air-bench-kills-"));
  const run = await startRl(
    out,
    "kills",
    [
      ...["--run.max_steps", String(steps), "--env.runtime", "docker", "--env.docker.image", image],
      ...["--orchestrator.rollout_retries", "2"],
    ],
    { timeoutMs: 15 * 60_000 },
  );
  const { runDir } = run;
  let done = 0;
  let exited = false;
  const killer = (async () => {
    while (done < kills && !exited) {
      await Bun.sleep(500 + rand() * 1000);
      const ids = await runContainers(docker, runDir).catch(() => []);
      const id = ids[Math.floor(rand() * ids.length)];
      if (!id) continue;
      await docker
        .getContainer(id)
        .kill()
        .then(() => done++)
        .catch(() => {});
    }
  })();
  try {
    const code = await run.exited;
    exited = true;
    await killer;
    const store = checkStore(runDir, 8, steps);
    const rolloutsDir = [
      join(runDir, "prime-rl", "rollouts"),
      join(runDir, "prime-rl", "run_default", "rollouts"),
    ].find((d) => existsSync(d));
    const batchFiles = rolloutsDir ? readdirSync(rolloutsDir).length : 0;
    const perStep = [...store.perStep.values()].join(" ");
    return {
      table: {
        title: "Containers killed mid-rollout (docker kill of a random labelled container every 0.5–1.5 s)",
        headers: [
          "exit",
          "containers killed",
          "steps",
          "rollouts per step",
          "lost",
          "doubled",
          "failed rollouts",
          "steps with samples",
          "batch files",
        ],
        rows: [
          [
            String(code),
            String(done),
            String(store.perStep.size),
            perStep,
            String(store.lost),
            String(store.doubled),
            String(store.failed),
            String(store.stepsWithSamples),
            String(batchFiles),
          ],
        ],
      },
      goal:
        `container kills: exit ${code} (goal 0), ${store.lost} lost and ${store.doubled} doubled (goal 0 and 0), ` +
        `rollouts per step ${perStep} (goal 8 each), ${batchFiles} batch files for ${store.stepsWithSamples} steps with samples (goal equal)`,
    };
  } finally {
    exited = true;
    run.child.kill("SIGKILL");
    removeRun(out);
  }
}
