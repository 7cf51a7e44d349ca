import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { definePlugin } from "@air/core";
import { runToml } from "@air/core/testing";
import { DockerHostsRuntime, dockerClientFor, removeContainersByLabel } from "@air/sandbox";
import {
  copyImage,
  type SecondDockerd,
  secondDockerdProblem,
  startSecondDockerd,
} from "@air/sandbox/testing/second-dockerd";
import { z } from "zod";
import { buildTaskFiles } from "./bundle.ts";
import { checkDockerHosts } from "./hosts.ts";
import plugin, { mlgymConfigSchema } from "./index.ts";
import { loadTaskSet } from "./task-set.ts";
import { dockerAvailable, REPO_ROOT, removeTestRunDirs, TEST_IMAGE, testContext } from "./testing/context.ts";

/**
 * Several Docker hosts for real: the main engine and a second dockerd started here (own data root, exec root and
 * pid file, TCP + TLS on 127.0.0.1, certificates made by openssl), the test image copied into it.
 */
const MAIN = process.env.DOCKER_HOST ?? "unix:///var/run/docker.sock";
const problem = secondDockerdProblem();
const available = problem === undefined && (await dockerAvailable());
if (problem !== undefined) console.warn(`skipping docker hosts tests: ${problem}`);
let second: SecondDockerd | undefined;

beforeAll(async () => {
  if (!available) return;
  second = await startSecondDockerd();
  copyImage(TEST_IMAGE, second);
}, 240_000);

afterAll(async () => {
  await second?.remove();
  removeTestRunDirs();
  // stopping the daemon (15 s grace) and removing its data root (the copied ~1 GB image) took ~90 s at load 30
}, 240_000);

function hostsOf(d: SecondDockerd, sandboxes = 2) {
  return [
    { url: MAIN, name: "main", sandboxes },
    { url: d.url, name: "second", tls: d.tls, sandboxes },
  ];
}

/** A policy that plays a fixed script per turn (a slow command first, so rollouts are in flight when a host stops). */
const scriptPolicy = definePlugin({
  name: "hosts-script",
  kind: "policy",
  configSchema: z.object({ commands: z.array(z.string()) }),
  create: (config) => {
    let version = 0;
    return {
      get version() {
        return version;
      },
      loadWeights: async (ref) => {
        version = ref.version;
      },
      generate: async ({ turnIndex }) => {
        const command = config.commands[Math.min(turnIndex, config.commands.length - 1)] ?? "submit";
        const ids = [...command].map((c) => c.charCodeAt(0));
        return {
          action: { text: command, command },
          promptTokenIds: [1, 2, 3],
          completionTokenIds: ids,
          completionLogprobs: ids.map(() => -1),
          finishReason: "stop",
          policyVersion: version,
          temperature: 1,
        };
      },
    };
  },
});

describe("docker hosts", () => {
  test.skipIf(!available)(
    "rl check: every host answers and has the image; a missing image names the host",
    async () => {
      const d = second as SecondDockerd;
      const config = mlgymConfigSchema.parse({
        tasks: ["apartmentRent"],
        docker: { image: TEST_IMAGE, hosts: hostsOf(d) },
      });
      const ok = await checkDockerHosts(config, REPO_ROOT);
      expect(ok.map((r) => [r.name, r.status])).toEqual([
        ["docker host main", "ok"],
        ["docker host second", "ok"],
      ]);
      const missing = await checkDockerHosts(
        { ...config, docker: { ...config.docker, image: "air-no-such:image" } },
        REPO_ROOT,
      );
      expect(
        missing.every((r) => r.status === "fail" && r.message.includes("lacks image air-no-such:image")),
      ).toBe(true);
      const down = mlgymConfigSchema.parse({
        tasks: ["apartmentRent"],
        docker: { image: TEST_IMAGE, hosts: [{ url: "tcp://127.0.0.1:9", sandboxes: 1 }] },
      });
      expect((await checkDockerHosts(down, REPO_ROOT))[0]?.message).toContain("does not answer");
    },
    60_000,
  );

  test.skipIf(!available)(
    "a run spreads rollouts over both hosts; the second daemon stopped mid-run → the run completes on the first, no sample lost",
    async () => {
      const d = second as SecondDockerd;
      const perStep = 4;
      const steps = 3;
      let stopped = false;
      let secondUsed = 0;
      const run = runToml(
        (dir) => `
logger = []
[run]
name = "hosts"
max_steps = ${steps}
output_dir = "${dir}/outputs"
[orchestrator]
batch_size = ${perStep}
rollouts_per_example = ${perStep}
max_turns = 3
rollout_retries = 3
max_concurrent_rollouts = ${perStep}
max_off_policy_steps = 0
[env]
plugin = "mlgym"
mlgym_root = "${REPO_ROOT}"
tasks = ["apartmentRent"]
aci = "air"
[env.docker]
image = "${TEST_IMAGE}"
pool_size = 2
host_probe_ms = 300
hosts = [
  { url = "${MAIN}", name = "main", sandboxes = 2 },
  { url = "${d.url}", name = "second", sandboxes = 2, tls = { ca = "${d.tls.ca}", cert = "${d.tls.cert}", key = "${d.tls.key}" } },
]
[policy]
plugin = "hosts-script"
commands = ["sleep 2", "ls", "submit"]
[trainer]
plugin = "memory"
[advantage]
plugin = "mean"
[strategy]
plugin = "per-turn"
[reward]
plugin = "last-score"
`,
        { plugins: [plugin, scriptPolicy], timeoutMs: 300_000 },
      );
      // stop the second daemon while step 1's rollouts run on it
      const watcher = (async () => {
        const deadline = Date.now() + 120_000;
        while (!stopped && Date.now() < deadline) {
          const mine = await d.docker
            .listContainers({ filters: { label: ["air.managed=true"] } })
            .catch(() => []);
          secondUsed = Math.max(secondUsed, mine.length);
          // stop it while a rollout's `sleep 2` runs there (not between steps, when its containers are parked)
          const tops = await Promise.all(
            mine.map((c) =>
              d.docker
                .getContainer(c.Id)
                .top()
                .catch(() => ({ Processes: [] as string[][] })),
            ),
          );
          if (tops.some((t) => (t.Processes ?? []).some((p: string[]) => p.join(" ").includes("sleep 2")))) {
            await d.stop(10_000);
            stopped = true;
          }
          await Bun.sleep(100);
        }
      })();
      const result = await run;
      await watcher;
      expect(stopped).toBe(true);
      expect(secondUsed).toBeGreaterThan(0);
      expect(result.summary.stepsCompleted).toBe(steps);
      // sandbox events name their host (the dashboard's view of sandboxes per host)
      const busyOn = new Set(
        result
          .of("sandbox:state")
          .filter((e) => e.state === "busy")
          .map((e) => e.host),
      );
      expect([...busyOn].sort()).toEqual(["main", "second"]);
      // every step trained all its rollouts: none failed for good
      for (const s of result.steps) {
        const rollouts = result.trajectories.filter((t) => t.step === s.step);
        expect(rollouts.filter((t) => t.stopReason !== "failed").length).toBe(perStep);
      }
      // drained once (the watcher stopped it while a rollout's command ran there; that rollout was retried)
      const drained = result.logs.filter((l) => l.message.includes("docker host second drained"));
      const hostLines = result.logs.filter((l) => l.message.includes("docker host"));
      expect(drained.length, hostLines.map((l) => l.message).join("\n")).toBe(1);
      // nothing of the run is left on the main engine
      const left = await dockerClientFor({ url: MAIN }).listContainers({
        all: true,
        filters: { label: [`air.run=${result.runDir}`] },
      });
      expect(left.length).toBe(0);
      await d.start();
      await removeContainersByLabel(d.docker, result.runDir);
    },
    360_000,
  );

  test.skipIf(!available)(
    "a host that stops answering is drained, probed, and readmitted with its leftovers removed",
    async () => {
      const d = second as SecondDockerd;
      if ((await d.docker.ping().catch(() => "down")) === "down") await d.start();
      const ctx = testContext("hosts-readmit");
      const config = mlgymConfigSchema.parse({ tasks: ["apartmentRent"], aci: "air" });
      const set = await loadTaskSet(config, REPO_ROOT);
      const task = set.byId.get("apartmentRent");
      if (task === undefined) throw new Error("no apartmentRent");
      const files = await buildTaskFiles(task, `${ctx.runDir}/mlgym-tasks`);
      const logs: string[] = [];
      const runtime = new DockerHostsRuntime(
        [
          { url: d.url, name: "second", tls: d.tls, sandboxes: 1, gpuIds: [], poolSize: 0 },
          { url: MAIN, name: "main", sandboxes: 1, gpuIds: [], poolSize: 0 },
        ],
        {
          base: {
            image: TEST_IMAGE,
            user: "agent",
            workspace: "/home/agent/workspace",
            memoryMb: 1024,
            cpus: 1,
            pidsLimit: 256,
            network: "none",
            runName: ctx.runDir,
            timeoutMs: 60_000,
          },
          requireGpu: false,
          probeMs: 200,
          log: (_level, message) => logs.push(message),
        },
      );
      try {
        const onSecond = await runtime.acquire(files, { rolloutId: "a" });
        const onMain = await runtime.acquire(files, { rolloutId: "b" });
        expect(runtime.hosts.map((h) => h.busy)).toEqual([1, 1]);
        // both full: a third acquire waits for a release
        const third = runtime.acquire(files, { rolloutId: "c" });
        const slow = onSecond.exec("sleep 30; echo never", 60_000).catch((e: unknown) => e);
        await d.stop(10_000);
        // the command in flight on the stopped host fails now (its container died, or the drain), not after 30 s
        const t0 = Date.now();
        const error = await slow;
        expect(error).toBeInstanceOf(Error);
        expect(Date.now() - t0).toBeLessThan(25_000);
        const drainBy = Date.now() + 60_000;
        while (runtime.hosts[0]?.up !== false && Date.now() < drainBy) await Bun.sleep(50);
        expect(runtime.hosts[0]?.up).toBe(false);
        expect(logs.some((l) => l.startsWith("docker host second drained"))).toBe(true);
        await runtime.release(onSecond, true);
        await runtime.release(onMain);
        const c = await third;
        expect((await c.exec("echo on main", 10_000)).output.trim()).toBe("on main");
        expect(runtime.hosts[1]?.busy).toBe(1);
        await d.start();
        const deadline = Date.now() + 120_000;
        while (runtime.hosts[0]?.up !== true && Date.now() < deadline) await Bun.sleep(100);
        expect(runtime.hosts[0]?.up).toBe(true);
        expect(logs.some((l) => /second answers again.*1 leftover container/.test(l))).toBe(true);
        const back = await runtime.acquire(files, { rolloutId: "d" });
        expect(runtime.hosts[0]?.busy).toBe(1);
        expect((await back.exec("echo back", 10_000)).output.trim()).toBe("back");
        await runtime.release(back);
        await runtime.release(c);
      } finally {
        await runtime.close();
      }
      for (const docker of [d.docker, dockerClientFor({ url: MAIN })]) {
        const left = await docker.listContainers({
          all: true,
          filters: { label: [`air.run=${ctx.runDir}`] },
        });
        expect(left.length).toBe(0);
      }
    },
    400_000,
  );
});
