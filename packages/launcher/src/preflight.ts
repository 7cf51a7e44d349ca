import { accessSync, constants, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import type { AuditFindings } from "@air/core";
import { readAuditFindings } from "./builtins.ts";
import { type CheckResult, fail, ok, skip } from "./check-result.ts";

import { dockerClient, dockerReachable, imagePresent } from "./containers.ts";
import type { diskSpace } from "./disk.ts";
import { isTrainerWorker } from "./launch-parts.ts";
import { pluginPreflight } from "./plugin-needs.ts";
import { checkCheckpointDisk } from "./preflight-disk.ts";
import { checkGpus } from "./preflight-gpus.ts";
import { inferenceKind, processContext, processSpec, trainerKind } from "./process-kinds.ts";
import { planOf } from "./run-plan.ts";
import { liveRuns } from "./rundir.ts";
import type { RunConfig } from "./sections.ts";

export type { CheckResult };

/** What preflight reads from the machine; tests point PATH at fake tools. */
export interface PreflightOptions {
  env?: NodeJS.ProcessEnv;
  /** Path to the `rl` entry, shown in "stop it with ..." hints. */
  rlEntry?: string;
  /**
   * The latest audit's findings (the launch plan's; undefined when never audited); read from the run's store
   * when the key is absent.
   */
  audit?: AuditFindings;
  /** Free space of a file system (tests: a small disk); default `statfs`. */
  diskSpace?: typeof diskSpace;
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

function checkOutputDir(config: RunConfig): CheckResult {
  const name = "output dir writable";
  const outputDir = dirname(config.runDir);
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

function checkPreviousRun(config: RunConfig, rlEntry: string): CheckResult {
  const name = "no live run in output dir";
  const outputDir = dirname(config.runDir);
  // A trainer worker node joins the master's run in the shared output dir: the master's live pid file is expected.
  if (isTrainerWorker(config)) return ok(name, `trainer worker node: joins the run in ${config.runDir}`);
  const live = liveRuns(outputDir);
  if (live.length === 0) return ok(name, `no pid file with a live process under ${outputDir}`);
  const lines = live.map((r) => `${r.runDir} (${r.live.map((e) => `${e.role} pid ${e.pid}`).join(", ")})`);
  return fail(
    name,
    `a previous run is still alive: ${lines.join("; ")}; stop it with: bun ${rlEntry} clean ${outputDir}`,
  );
}

async function checkPorts(config: RunConfig): Promise<CheckResult[]> {
  const { inference, trainer_process: tp } = config.root;
  const wanted: Array<[string, string, number]> = [];
  if (inference.kind !== "external" && !isTrainerWorker(config))
    wanted.push(["inference", inference.host, inference.port]);
  const trainer = trainerKind(config);
  const rendezvous = trainer && (trainer.ranks?.(processContext(config), 0).rendezvous ?? true);
  if (rendezvous && tp.node_rank === 0) wanted.push(["trainer rendezvous", tp.master_addr, tp.master_port]);
  const out: CheckResult[] = [];
  for (const [what, host, port] of wanted) {
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

async function checkExternal(config: RunConfig): Promise<CheckResult[]> {
  const { inference } = config.root;
  if (inference.kind !== "external") return [];
  const name = "external inference server answers";
  const base = planOf(config).urls.inference;
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
function checkPolicyUrl(config: RunConfig): CheckResult[] {
  const baseUrl = planOf(config).needs.inferenceUrl;
  if (baseUrl === undefined) return [];
  const name = "policy base_url reaches the inference server";
  const server = planOf(config).urls.inference;
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
function checkPrograms(config: RunConfig, env: NodeJS.ProcessEnv): CheckResult[] {
  const wanted: Array<[string, string]> = [];
  const unbuilt: CheckResult[] = [];
  const none = { ids: [], count: 0 };
  for (const [role, kind] of [
    ["inference", inferenceKind(config)],
    ["trainer", trainerKind(config)],
  ] as const) {
    if (!kind) continue;
    try {
      const program = processSpec(kind, role === "trainer" ? "trainer_process" : "inference", config, none)
        .argv[0];
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

async function checkDocker(config: RunConfig): Promise<CheckResult[]> {
  const { launcher } = config.root;
  const needs = planOf(config).needs;
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
 * Runs every preflight check that applies to the config, in order, without starting anything.
 * A check that does not apply is left out; one that cannot be decided is "skip".
 * @example const results = await runPreflight(config); const failed = results.filter((r) => r.status === "fail");
 */
export async function runPreflight(
  config: RunConfig,
  options: PreflightOptions = {},
): Promise<CheckResult[]> {
  const env = options.env ?? process.env;
  const rlEntry = options.rlEntry ?? resolve(import.meta.dir, "bin", "rl.ts");
  const results: CheckResult[] = [checkOutputDir(config), checkPreviousRun(config, rlEntry)];
  results.push(...(await checkPorts(config)));
  results.push(...checkGpus(config, env));
  results.push(...checkCheckpointDisk(config, env, options.diskSpace));
  results.push(...checkPolicyUrl(config));
  results.push(...checkPrograms(config, env));
  const audit = "audit" in options ? options.audit : await readAuditFindings(config.runDir);
  results.push(...(await pluginPreflight(config, audit)));
  results.push(...(await checkDocker(config)));
  results.push(...(await checkExternal(config)));
  return results;
}

/** One line per check: `ok   name: message`. */
export function formatChecks(results: CheckResult[]): string {
  return results.map((r) => `${r.status.padEnd(4)} ${r.name}: ${r.message}`).join("\n");
}
