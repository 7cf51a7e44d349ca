import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  freePort,
  killSurvivors,
  type LauncherRun,
  REPO_ROOT,
  startLauncher,
  survivors,
} from "@air/launcher/testing";
import { type CpuRun, cpuOverrides, STAND_INS } from "./test-gpu-path.ts";

/**
 * Every shipped prime-rl config runs 2 steps on CPU through the GPU code path: the launcher's torchrun branch
 * (prime-rl's argv, `torchrun-sid` = Debian sid's torchrun under bwrap) with N gloo ranks of the CPU trainer, and
 * prime-rl's `inference @ inference.toml` branch with the CPU server, changed only by `cpuOverrides`. Needs the sid
 * root (bash scripts/build-torch-root); skipped with a message when it is missing.
 */
const SID_ROOT = join(process.env.HOME ?? "/root", ".cache", "air", "torch-root", "current", ".air-built");
const haveSid = existsSync(
  process.env.AIR_TORCH_ROOT ? join(process.env.AIR_TORCH_ROOT, ".air-built") : SID_ROOT,
);
if (!haveSid) process.stderr.write("gpu-path: no sid torch root; run bash scripts/build-torch-root\n");
const RUN_MS = 420_000;

let current: { run?: LauncherRun; runDir?: string; out?: string; server?: { stop: () => Promise<unknown> } } =
  {};
afterEach(async () => {
  if (current.runDir) killSurvivors(current.run, current.runDir);
  await current.server?.stop();
  if (current.out) rmSync(current.out, { recursive: true, force: true });
  current = {};
});

/**
 * A free port whose successor is free too (the ZMQ transport binds port and port + 1, late: at the first batch),
 * below the ephemeral range (32768+), where the policy's hundreds of outgoing connections would take it meanwhile.
 */
interface Case {
  config: string;
  runName: string;
  ranks: number;
  mlgym: boolean;
  transport: "filesystem" | "zmq";
  /** `[inference] kind` of the config (kept; only its command is swapped for the stand-in). */
  server: "vllm" | "prime-rl";
  external?: boolean;
  /** prime-rl's router in front of the engine (launched: [inference] router = true; external: started so). */
  router?: boolean;
  /** `[trainer] lora = true`: the trainer broadcasts LoRA adapters, the policy loads them by name. */
  lora?: boolean;
}

async function runConfig(
  c: Case,
  extra: string[] = [],
): Promise<{ code: number | null; runDir: string; run: LauncherRun }> {
  const out = mkdtempSync(join(tmpdir(), "air-gpu-path-"));
  const runDir = join(out, c.runName);
  current = { out, runDir };
  const zmqPort = await freePort({ count: 2, range: [20_000, 32_000] });
  const other = async (not: number[]): Promise<number> => {
    for (;;) {
      const port = await freePort();
      if (!not.includes(port)) return port;
    }
  };
  const port = await other([zmqPort, zmqPort + 1]);
  const o: CpuRun = {
    out,
    port,
    masterPort: await other([zmqPort, zmqPort + 1, port]),
    zmqPort,
    ranks: c.ranks,
    mlgym: c.mlgym,
    transport: c.transport,
    server: c.server,
  };
  const backendPort = c.router ? await other([zmqPort, zmqPort + 1, port, o.masterPort]) : undefined;
  if (c.external) {
    current.server = await startExternal(out, o.port, backendPort);
    o.externalUrl = `http://127.0.0.1:${o.port}`;
    if (backendPort) o.externalAdminUrl = `http://127.0.0.1:${backendPort}`;
  } else if (backendPort) o.router = { backendPort };
  const run = startLauncher(
    [
      join(REPO_ROOT, c.config),
      ...cpuOverrides(o).filter((a) => !extra.some((e) => e.split("=")[0] === a.split("=")[0])),
      ...extra,
    ],
    {
      cwd: out,
      timeoutMs: RUN_MS,
    },
  );
  current.run = run;
  return { code: await run.done, runDir, run };
}

/** configs/dataset/distributed.toml's server, started by hand as its comment tells users (`inference @ file`). */
async function startExternal(
  out: string,
  port: number,
  backendPort?: number,
): Promise<{ stop: () => Promise<unknown> }> {
  const toml = join(out, "inference.toml");
  const model = join(STAND_INS.models, "algebra-mc");
  // With a backend port: prime-rl's default router on `port`, the engine behind it (the config's admin_url).
  const router = backendPort ? `backend_port = ${backendPort}\n` : `router = "None"\n`;
  writeFileSync(toml, `${router}[server]\nhost = "127.0.0.1"\nport = ${port}\n[vllm]\nmodel = "${model}"\n`);
  const proc = Bun.spawn(["/usr/bin/python3", STAND_INS.inference, "@", toml], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  await reader.read(); // the "listening" line
  reader.releaseLock();
  return {
    stop: async () => {
      proc.kill("SIGTERM");
      return await proc.exited;
    },
  };
}

function trainedSteps(runDir: string): number[] {
  const db = new Database(join(runDir, "air.db"), { readonly: true });
  const rows = db
    .query("SELECT step, value FROM metrics WHERE name = 'trainer/progress/samples' ORDER BY step")
    .all() as Array<{ value: number }>;
  db.close();
  return rows.map((r) => r.value);
}

const CASES: Case[] = [
  {
    config: "configs/mlgym/rl.toml",
    runName: "mlgym-rl",
    lora: true,
    ranks: 5,
    mlgym: true,
    transport: "filesystem",
    server: "vllm",
  },
  {
    config: "configs/mlgym/rl_debug.toml",
    runName: "mlgym-rl-debug",
    lora: true,
    ranks: 5,
    mlgym: true,
    server: "vllm",
    transport: "zmq",
  },
  {
    config: "configs/mlgym/multi-host.toml",
    runName: "mlgym-multi-host",
    lora: true,
    ranks: 5,
    mlgym: true,
    server: "vllm",
    transport: "filesystem",
  },
  {
    config: "configs/dataset/default.toml",
    runName: "dataset-default",
    server: "prime-rl",
    ranks: 1,
    mlgym: false,
    transport: "zmq",
    router: true,
  },
  {
    config: "configs/dataset/full.toml",
    runName: "dataset-full",
    server: "prime-rl",
    ranks: 6,
    mlgym: false,
    transport: "filesystem",
  },
  {
    config: "configs/dataset/distributed.toml",
    runName: "dataset-distributed",
    server: "prime-rl",
    ranks: 8,
    mlgym: false,
    transport: "zmq",
    external: true,
    router: true,
  },
];

describe.skipIf(!haveSid)(
  "shipped GPU configs, 2 steps on CPU through the torchrun and prime-rl inference branches",
  () => {
    for (const c of CASES) {
      test(
        `${c.config}: ${c.ranks} rank(s), ${c.transport}${c.router ? ", router on" : ""}`,
        async () => {
          const { code, runDir, run } = await runConfig(c);
          if (code !== 0) throw new Error(`launcher exited ${code}:\n${run.stderr().slice(-4000)}`);
          const argv = readFileSync(join(runDir, "logs", "trainer.log"), "utf8");
          expect(argv.length).toBeGreaterThan(0);
          expect(run.stderr()).toContain("--local-ranks-filter=0");
          if (!c.external)
            expect(run.stderr()).toContain(
              c.server === "vllm"
                ? `starting inference: ${STAND_INS.vllm} serve `
                : `${STAND_INS.inference} @ `,
            );
          expect(run.stderr()).toContain(`--nproc-per-node=${c.ranks}`);
          expect(run.stderr()).toContain("-m air_tiny.trainer @");
          // Every rank trained every step: the trainer's sample count is over all ranks, and each rank read its own file.
          expect(trainedSteps(runDir).every((n) => n > 0)).toBe(true);
          const prime = join(runDir, "prime-rl");
          if (c.transport === "filesystem") {
            // The newest step's batch (older ones are pruned behind the checkpoints): one file per derived data rank.
            const steps = readdirSync(join(prime, "rollouts")).map((d) => Number(d.replace("step_", "")));
            const newest = join(prime, "rollouts", `step_${Math.max(...steps)}`);
            const want = Array.from({ length: c.ranks }, (_, r) => `rank_${r}.bin`).sort();
            expect(readdirSync(newest).sort()).toEqual(want);
          }
          const step2 = join(prime, "broadcasts", "step_2");
          expect(existsSync(join(step2, "STABLE"))).toBe(true);
          const final = JSON.parse(readFileSync(join(runDir, "final-weights.json"), "utf8"));
          if (c.lora) {
            // prime-rl's LoRA broadcast: the adapter alone (no base weights), and it is the run's final weights.
            const adapter = ["adapter_config.json", "adapter_model.safetensors"];
            expect(readdirSync(step2).sort()).toEqual(["STABLE", ...adapter]);
            expect(final).toMatchObject({ kind: "lora", loadable: true });
            expect(readdirSync(final.dir).sort()).toEqual(adapter);
            // The policy loaded each new adapter into the server under vLLM's versioned names (the server's log line).
            const served = readFileSync(join(runDir, "logs", "inference.log"), "utf8");
            expect(served).toContain("Loaded new LoRA adapter: name 'air-lora-v1', path ");
          } else {
            expect(existsSync(join(step2, "model.pt"))).toBe(true);
            expect(final).toMatchObject({ kind: "full", loadable: true });
          }
          expect(survivors(run, runDir)).toEqual([]);
        },
        RUN_MS + 60_000,
      );
    }

    test(
      "data_world_size set wrong by hand (1 for 6 trainer ranks) is refused before anything starts, naming both keys",
      async () => {
        // Before the launcher derived it, this run wrote rank_0.bin only: ranks 1-5 waited for their files and rank 0
        // failed in the gradient all-reduce after dist_timeout_seconds (the stand-in, like prime-rl, waits for its
        // own file without a bound; the collective is the bound). Now `rl` refuses the contradiction.
        const full = CASES[4];
        if (!full) throw new Error("no full.toml case");
        const { code, run, runDir } = await runConfig(full, ["--trainer.data_world_size=1"]);
        expect(code).toBe(2);
        expect(run.stderr()).toContain("trainer.data_world_size = 1 contradicts 6");
        expect(run.stderr()).toContain("deployment.trainer_gpu_ids");
        expect(existsSync(join(runDir, "prime-rl", "rollouts"))).toBe(false);
        expect(survivors(run, runDir)).toEqual([]);
      },
      RUN_MS + 60_000,
    );
  },
);
