import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fakePath, REPO_ROOT, RL_ENTRY, removeTempDirs, writeFixtureConfig } from "./test-helpers.ts";

afterAll(removeTempDirs);

/** Runs `bun rl.ts <args>` as a real child from `cwd`. */
function rl(args: string[], cwd = tmpdir()) {
  const out = spawnSync(process.execPath, [RL_ENTRY, ...args], { cwd, encoding: "utf8", timeout: 60_000 });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

/** A fixture config with `edit` applied to its text. */
async function configWith(edit: (toml: string) => string): Promise<string> {
  const fx = await writeFixtureConfig();
  writeFileSync(fx.file, edit(readFileSync(fx.file, "utf8")));
  return fx.file;
}

describe("rl validate (real child process)", () => {
  test("a valid config exits 0 and prints the resolved config", async () => {
    const file = await configWith((t) => t);
    const out = rl(["validate", file]);
    expect(out.code).toBe(0);
    const resolved = JSON.parse(out.stdout);
    expect(resolved.root.inference.kind).toBe("vllm");
    expect(resolved.root.launcher.grace_ms).toBe(3000);
    expect(resolved.plugins.env.plugin).toEndWith("env.ts");
  }, 60_000);

  const cases: Array<[string, (t: string) => string, string]> = [
    [
      "unknown plugin name",
      (t) => t.replace(/\[advantage\]\nplugin = .*\n/, '[advantage]\nplugin = "no-such-advantage"\n'),
      'advantage.plugin: no advantage plugin named "no-such-advantage"',
    ],
    [
      "missing required key",
      (t) => t.replace(/\[env\]\nplugin = .*\n/, "[env]\n"),
      "env.plugin: required key is missing",
    ],
    ["wrong type", (t) => t.replace("batch_size = 2", 'batch_size = "two"'), "orchestrator.batch_size: "],
    [
      "wrong type in a plugin section",
      (t) => t.replace(/delay_ms = \d+/, 'delay_ms = "slow"'),
      "policy.delay_ms: ",
    ],
    [
      "unknown key",
      (t) => t.replace("[inference]\n", "[inference]\nprot = 8000\n"),
      "inference.prot: unknown key",
    ],
    [
      "unknown key in a plugin section",
      (t) => t.replace("[env]\n", "[env]\nexampels = 3\n"),
      "env.exampels: unknown key",
    ],
    [
      "plugin file that does not exist",
      (t) => t.replace(/\[reward\]\nplugin = .*\n/, '[reward]\nplugin = "./missing-reward.ts"\n'),
      "reward.plugin: plugin file not found",
    ],
    [
      "GPU lists that overlap",
      (t) => `${t}\n[deployment]\ninference_gpu_ids = [0]\ntrainer_gpu_ids = [0, 1]\n`,
      "deployment.trainer_gpu_ids: GPU 0 is also in inference_gpu_ids",
    ],
  ];
  for (const [name, edit, message] of cases) {
    test(`${name}: exits 2 naming the TOML path and the file`, async () => {
      const file = await configWith(edit);
      const cwd = tmpdir();
      const out = rl(["validate", file], cwd);
      expect(out.code).toBe(2);
      expect(out.stderr).toContain(message);
      expect(out.stderr).toContain(`(${relative(cwd, file)})`);
    }, 60_000);
  }

  test("overrides apply from the command line", async () => {
    const file = await configWith((t) => t);
    const out = rl(["validate", file, "--inference.port", "9123", "--deployment.num_infer_gpus", "1"]);
    expect(out.code).toBe(0);
    const resolved = JSON.parse(out.stdout);
    expect(resolved.root.inference.port).toBe(9123);
    expect(resolved.root.deployment.num_infer_gpus).toBe(1);
  }, 60_000);

  test("sections a child process reads are checked at validate, with their TOML paths", async () => {
    const file = await configWith((t) => t);
    const out = rl(["validate", file, "--trainer_process.lr", "-1", "--deployment.device", '"tpu"']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("trainer_process.lr:");
    expect(out.stderr).toContain("deployment.device:");
    const quickstart = join(import.meta.dir, "..", "..", "..", "configs", "quickstart.toml");
    const url = rl(["validate", quickstart, "--policy.base_url", '"not a url"']);
    expect(url.code).toBe(2);
    expect(url.stderr).toContain("policy.base_url: expected an http(s) URL");
  }, 60_000);

  test("a deployment that cannot work is refused: full-weight reloads against stock vllm serve", () => {
    const quickstart = join(import.meta.dir, "..", "..", "..", "configs", "quickstart.toml");
    const stock = rl(["validate", quickstart, "--inference.kind", '"vllm"']);
    expect(stock.code).toBe(2);
    expect(stock.stderr).toContain('inference.kind: stock `vllm serve` ("vllm") has no /pause');
    expect(rl(["validate", quickstart, "--inference.kind", '"prime-rl"']).code).toBe(0);
    const lora = ["--policy.weight_update", '"lora"', "--policy.lora_name", '"a"'];
    expect(rl(["validate", quickstart, "--inference.kind", '"vllm"', ...lora]).code).toBe(0);
  }, 60_000);

  test("the env's tasks are loaded: a missing task exits 2 naming it; a root not on this machine is skipped", async () => {
    const configs = join(import.meta.dir, "..", "..", "..", "configs");
    const ok = rl(["validate", join(configs, "quickstart.toml")]);
    expect(ok.code).toBe(0);
    expect(ok.stderr).toContain("(tasks loaded:");
    const missing = rl(["validate", join(configs, "quickstart.toml"), "--env.tasks", '["noSuchTask"]']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("fail: task noSuchTask:");
    expect(missing.stderr).toContain("noSuchTask.yaml does not exist");
    const away = rl([
      "validate",
      join(configs, "quickstart.toml"),
      "--env.mlgym_root",
      '"/nonexistent/MLGym"',
    ]);
    expect(away.code).toBe(0);
    expect(away.stderr).toContain("skip: MLGym tasks: not loaded: the task root /nonexistent/MLGym");
    const harbor = rl(["validate", join(configs, "harbor", "oracle.toml"), "--env.tasks", '["noSuchTask"]']);
    expect(harbor.code).toBe(2);
    expect(harbor.stderr).toContain("noSuchTask: no such task folder");
  }, 60_000);

  test("rl, eval and audit print their usage: exit 0 for --help and -h, 2 without arguments", () => {
    for (const bin of [RL_ENTRY, join(RL_ENTRY, "..", "eval.ts"), join(RL_ENTRY, "..", "audit.ts")]) {
      const run = (args: string[]) =>
        spawnSync(process.execPath, [bin, ...args], { cwd: tmpdir(), encoding: "utf8", timeout: 60_000 });
      for (const flag of ["--help", "-h"]) {
        const help = run([flag]);
        expect({ bin, code: help.status }).toEqual({ bin, code: 0 });
        expect(help.stdout).toContain("usage");
      }
      const bare = run([]);
      expect({ bin, code: bare.status }).toEqual({ bin, code: 2 });
      expect(bare.stdout).toContain("usage");
    }
  }, 120_000);

  test("usage errors exit 2", () => {
    expect(rl(["validate"]).code).toBe(2);
    expect(rl(["clean"]).code).toBe(2);
    expect(rl(["check"]).code).toBe(2);
  }, 60_000);
});

describe("rl check (real child process)", () => {
  test("prints one line per check and exits 0 when all pass", async () => {
    const file = await configWith((t) => t);
    const out = spawnSync(process.execPath, [RL_ENTRY, "check", file], {
      encoding: "utf8",
      env: { ...process.env, PATH: fakePath() },
      timeout: 60_000,
    });
    expect(out.status).toBe(0);
    expect(out.stdout).toMatch(/^ok {3}output dir writable: /m);
    expect(out.stdout).toMatch(/^ok {3}inference program `vllm` found: .*fixtures\/bin\/vllm$/m);
    expect(out.stdout).toContain("all checks passed");
  }, 60_000);
});

describe("seed configs", () => {
  for (const name of ["rl.toml", "rl_debug.toml"]) {
    const file = join(REPO_ROOT, "configs", "mlgym", name);

    test(`rl validate passes on configs/mlgym/${name} from any directory`, () => {
      const out = rl(["validate", file], tmpdir());
      expect(out.stderr).toContain("is valid");
      expect(out.code).toBe(0);
      const resolved = JSON.parse(out.stdout);
      expect(resolved.runDir).toStartWith(join(REPO_ROOT, "outputs"));
      expect(resolved.plugins.env.plugin).toBe("mlgym");
      expect(resolved.root.deployment).toMatchObject({
        inference_gpu_ids: [0],
        trainer_gpu_ids: [2, 3, 4, 5, 6],
        env_gpu_ids: [7],
      });
    }, 60_000);

    test(`rl check on configs/mlgym/${name} prints one line per check`, () => {
      const out = rl(["check", file], tmpdir());
      const lines = out.stdout.trim().split("\n");
      expect(lines.slice(0, -1).every((l) => /^(ok|fail|skip) +.+?: /.test(l))).toBe(true);
      expect(lines.some((l) => /GPU/.test(l))).toBe(true);
      expect(lines.some((l) => /MLGym root: /.test(l))).toBe(true);
      expect(out.code).toBe(out.stdout.includes("\nfail ") || out.stdout.startsWith("fail ") ? 2 : 0);
    }, 30_000);
  }
});
