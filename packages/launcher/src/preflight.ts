import { accessSync, constants, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import type { AuditFindings } from "@air/core";
import { readAuditFindings } from "./builtins.ts";
import { type CheckResult, fail, ok, skip } from "./check-result.ts";

import { dockerClient, dockerReachable, imagePresent } from "./containers.ts";
import type { diskSpace } from "./disk.ts";
import { type GpuPlan, planGpus } from "./gpus.ts";
import { pluginPreflight } from "./plugin-needs.ts";
import { checkCheckpointDisk } from "./preflight-disk.ts";
import { checkGpus } from "./preflight-gpus.ts";
import type { PlannedPort, RunPlan } from "./run-plan.ts";
import { liveRuns } from "./rundir.ts";

export type { CheckResult };

/** What preflight checks: the run's plan, its GPUs as planned on this machine, and the latest audit's findings. */
export interface PreflightPlan {
  readonly run: RunPlan;
  readonly gpus: GpuPlan;
  /** The latest audit's findings (undefined when never audited): the plugins' checks get them. */
  readonly audit?: AuditFindings;
}

/** What preflight reads from the machine; tests point PATH at fake tools. */
export interface PreflightOptions {
  env?: NodeJS.ProcessEnv;
  /** Path to the `rl` entry, shown in "stop it with ..." hints. */
  rlEntry?: string;
  /** Free space of a file system (tests: a small disk); default `statfs`. */
  diskSpace?: typeof diskSpace;
}

/**
 * The plan `rl check` checks, as a launch plans it (`planLaunch`): the GPUs planned against `env`, the audit's
 * findings read from the run's store.
 * @example const results = await runPreflight(await preflightPlan(planOf(config)));
 */
export async function preflightPlan(
  run: RunPlan,
  env: NodeJS.ProcessEnv = process.env,
): Promise<PreflightPlan> {
  return {
    run,
    gpus: planGpus(run.config.root.deployment, env),
    audit: await readAuditFindings(run.config),
  };
}

/** Resolves when `host:port` can be bound (then frees it), false when something holds it. */
export function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once("error", () => done(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => done(true)));
  });
}

/** Finds `program` on `env.PATH` (or as a path), or undefined. */
export function which(program: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (program.includes("/")) return existsSync(program) ? resolve(program) : undefined;
  for (const dir of (env.PATH ?? "").split(":")) {
    if (!dir) continue;
    const candidate = join(dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

function checkOutputDir(run: RunPlan): CheckResult {
  const name = "output dir writable";
  const outputDir = dirname(run.config.runDir);
  try {
    mkdirSync(outputDir, { recursive: true });
    const probe = join(outputDir, `.preflight-${process.pid}`);
    writeFileSync(probe, "ok");
    rmSync(probe);
    return ok(name, outputDir);
  } catch (error) {
    return fail(name, `cannot write to ${outputDir}: ${(error as Error).message}`);
  }
}

function checkPreviousRun(run: RunPlan, rlEntry: string): CheckResult {
  const name = "no live run in output dir";
  const { runDir } = run.config;
  const outputDir = dirname(runDir);
  // A trainer worker node joins the master's run in the shared output dir: the master's live pid file is expected.
  if (run.worker) return ok(name, `trainer worker node: joins the run in ${runDir}`);
  const live = liveRuns(outputDir);
  if (live.length === 0) return ok(name, `no pid file with a live process under ${outputDir}`);
  const lines = live.map((r) => `${r.runDir} (${r.live.map((e) => `${e.role} pid ${e.pid}`).join(", ")})`);
  return fail(
    name,
    `a previous run is still alive: ${lines.join("; ")}; stop it with: bun ${rlEntry} clean ${outputDir}`,
  );
}

async function checkPorts(ports: readonly PlannedPort[]): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  for (const { what, host, port } of ports) {
    const name = `port ${port} free (${what})`;
    out.push(
      (await portFree(host, port))
        ? ok(name, `${host}:${port}`)
        : fail(
            name,
            `${host}:${port} is in use; stop what holds it (e.g. \`ss -ltnp 'sport = :${port}'\`) or pick another port`,
          ),
    );
  }
  return out;
}

async function checkExternal(run: RunPlan): Promise<CheckResult[]> {
  if (run.config.root.inference.kind !== "external") return [];
  const name = "external inference server answers";
  const base = run.urls.inference;
  if (!base) return [skip(name, "no [inference] url; the policy's own base_url is used as is")];
  try {
    const res = await fetch(`${base}/v1/models`, { signal: AbortSignal.timeout(5000) });
    await res.arrayBuffer();
    return [res.ok ? ok(name, `${base}/v1/models`) : fail(name, `${base}/v1/models answered ${res.status}`)];
  } catch (error) {
    return [fail(name, `${base}/v1/models: ${(error as Error).message}`)];
  }
}

/** The URL a plugin sends requests to (`launch.needs`) must be the server the launcher starts (prime-rl checks the same). */
function checkPolicyUrl(run: RunPlan): CheckResult[] {
  const baseUrl = run.needs.inferenceUrl;
  if (baseUrl === undefined) return [];
  const name = "policy base_url reaches the inference server";
  const server = run.urls.inference;
  if (!server) return [];
  let got: URL;
  let want: URL;
  try {
    got = new URL(baseUrl);
    want = new URL(server);
  } catch {
    return [
      fail(name, `cannot compare [policy] base_url "${baseUrl}" with the inference server "${server}"`),
    ];
  }
  const port = (u: URL) => u.port || (u.protocol === "https:" ? "443" : "80");
  if (got.hostname === want.hostname && port(got) === port(want)) return [ok(name, baseUrl)];
  return [
    fail(name, `[policy] base_url is ${baseUrl}, but the inference server is at ${server}; make them agree`),
  ];
}

/** The program each process the launcher starts runs: the first word of the command its plugin declares. */
function checkPrograms(run: RunPlan, env: NodeJS.ProcessEnv): CheckResult[] {
  const wanted: Array<[string, string]> = [];
  const unbuilt: CheckResult[] = [];
  for (const [role, planned] of [
    ["inference", run.inference],
    ["trainer", run.trainer],
  ] as const) {
    if (!planned) continue;
    try {
      const program = planned.kind.spec({ ...planned.ctx, gpuIds: [], gpuCount: 0 }).argv[0];
      if (program) wanted.push([role, program]);
    } catch (error) {
      unbuilt.push(fail(`${role} command`, (error as Error).message));
    }
  }
  const programs = wanted.map(([role, program]) => {
    const name = `${role} program \`${program}\` found`;
    const found = which(program, env);
    return found
      ? ok(name, found)
      : fail(
          name,
          `\`${program}\` is not on PATH; install it (e.g. prime-rl / vLLM in a venv) or set [${role === "trainer" ? "trainer_process" : "inference"}] command`,
        );
  });
  return [...unbuilt, ...programs];
}

async function checkDocker(run: RunPlan): Promise<CheckResult[]> {
  const { launcher } = run.config.root;
  const { needs } = run;
  const images = launcher.docker_image ? [launcher.docker_image] : needs.dockerImages;
  const key = launcher.docker_image
    ? "[launcher] docker_image"
    : (needs.dockerImagesKey ?? "[env] docker.image");
  if (images.length === 0) return [];
  const docker = dockerClient();
  if (!(await dockerReachable(docker)))
    return [
      fail(
        "docker reachable",
        "no docker engine answers (DOCKER_HOST or /var/run/docker.sock); start it, e.g. `dockerd >/tmp/dockerd.log 2>&1 &`",
      ),
    ];
  const out = [ok("docker reachable", "engine answers")];
  for (const image of images) {
    out.push(
      (await imagePresent(image, docker))
        ? ok(`image ${image} present`, image)
        : fail(
            `image ${image} present`,
            `${image} is not in the local image store (images are never pulled); build it, or set ${key} ` +
              "to a local one (`bun run images:build` makes air-mlgym-test:latest)",
          ),
    );
  }
  return out;
}

/**
 * Runs every preflight check that applies to the plan, in order, without starting anything; it reads the plan
 * (ports, GPUs, URLs, process kinds, needs) and plans nothing itself.
 * A check that does not apply is left out; one that cannot be decided is "skip".
 * @example const results = await runPreflight(await preflightPlan(planOf(config))); results.filter((r) => r.status === "fail");
 */
export async function runPreflight(
  plan: PreflightPlan,
  options: PreflightOptions = {},
): Promise<CheckResult[]> {
  const { run } = plan;
  const env = options.env ?? process.env;
  const rlEntry = options.rlEntry ?? resolve(import.meta.dir, "bin", "rl.ts");
  const results: CheckResult[] = [checkOutputDir(run), checkPreviousRun(run, rlEntry)];
  results.push(...(await checkPorts(run.ports)));
  results.push(...checkGpus(run, plan.gpus, env));
  results.push(...checkCheckpointDisk(run, env, options.diskSpace));
  results.push(...checkPolicyUrl(run));
  results.push(...checkPrograms(run, env));
  results.push(...(await pluginPreflight(run.plugins, run.launch, plan.audit)));
  results.push(...(await checkDocker(run)));
  results.push(...(await checkExternal(run)));
  return results;
}

/** One line per check: `ok   name: message`. */
export function formatChecks(results: CheckResult[]): string {
  return results.map((r) => `${r.status.padEnd(4)} ${r.name}: ${r.message}`).join("\n");
}
