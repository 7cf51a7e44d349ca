import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { primeRlPaths as paths, pruneStepDirs } from "@air/trainer-prime-rl";
import { resolveConfig } from "./cli.ts";
import { exportFinalWeights, finalWeightsLines } from "./final-weights.ts";
import { processContext } from "./process-kinds.ts";
import { resumeWeights } from "./resume.ts";
import { planOf } from "./run-plan.ts";
import { writeProgress } from "./rundir.ts";
import { REPO_ROOT, removeTempDirs, tempDir } from "./test-helpers.ts";

type Config = Parameters<typeof processContext>[0];
const primeRlPaths = (c: Config) => paths(processContext(c));

afterAll(removeTempDirs);

/** A run dir after 3 air steps (prime-rl steps 1..3), the trainer's broadcasts on disk. */
async function finishedRun(args: string[], files: Record<string, string>) {
  const out = tempDir("final");
  const base = join(out, "base-model");
  mkdirSync(base, { recursive: true });
  for (const name of ["config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors"])
    writeFileSync(join(base, name), name === "model.safetensors" ? "BASE WEIGHTS" : `{"${name}": 1}`);
  const config = await resolveConfig(join(REPO_ROOT, "configs", "quickstart.toml"), [
    `--run.output_dir="${out}"`,
    `--model.name="${base}"`,
    ...args,
  ]);
  const { runDir } = primeRlPaths(config);
  for (const step of [1, 2, 3]) {
    const dir = join(runDir, "broadcasts", `step_${step}`);
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), `${text} ${step}`);
    writeFileSync(join(dir, "STABLE"), "");
  }
  writeProgress(config.runDir, { lastCompletedStep: 2, updatedAt: new Date().toISOString(), metrics: {} });
  return { config, runDir, base };
}

test("full weights: the last finished broadcast, copied, with the base model's config and tokenizer: vllm serve <dir>", async () => {
  const { config, runDir } = await finishedRun([], { "model.safetensors": "TRAINED" });
  const w = exportFinalWeights(planOf(config).config.plugins.trainer, planOf(config).launch);
  expect(w).toMatchObject({
    kind: "full",
    step: 2,
    loadable: true,
    source: join(runDir, "broadcasts", "step_3"),
  });
  const dir = w?.dir as string;
  expect(readFileSync(join(dir, "model.safetensors"), "utf8")).toBe("TRAINED 3");
  // its own inode: a resumed trainer that broadcasts step 3 again truncates and rewrites the file in place, as
  // prime-rl's save_file does, and the deliverable must not change with it
  expect(statSync(join(dir, "model.safetensors")).ino).not.toBe(
    statSync(join(runDir, "broadcasts", "step_3", "model.safetensors")).ino,
  );
  writeFileSync(join(runDir, "broadcasts", "step_3", "model.safetensors"), "REWRITTEN");
  expect(readFileSync(join(dir, "model.safetensors"), "utf8")).toBe("TRAINED 3");
  expect(readFileSync(join(dir, "config.json"), "utf8")).toContain("config.json");
  expect(existsSync(join(dir, "tokenizer.json"))).toBe(true);
  expect(existsSync(join(dir, "STABLE"))).toBe(false);
  expect(w?.serve).toBe(`vllm serve ${dir}`);
  expect(finalWeightsLines(w!)).toEqual([
    `final weights (full model, step 2): ${dir}`,
    `serve them: vllm serve ${dir}`,
  ]);
  expect(JSON.parse(readFileSync(join(config.runDir, "final-weights.json"), "utf8")).dir).toBe(dir);
  // pruning the broadcasts later (or a next run) does not take the deliverable with it
  rmSync(join(runDir, "broadcasts"), { recursive: true });
  pruneStepDirs({ runDir, outputDir: runDir, newest: 9, keepBroadcasts: 2 });
  expect(readFileSync(join(dir, "model.safetensors"), "utf8")).toBe("TRAINED 3");
});

test("a resumed run that finished no new step: the weights --resume set aside are the final weights", async () => {
  const { config, runDir } = await finishedRun([], { "model.safetensors": "TRAINED" });
  // progress: air step 2 done (prime-rl step 3); --resume sets broadcasts/step_3 aside
  expect(resumeWeights(planOf(config).config.plugins.trainer, planOf(config).launch, 3)?.path).toBe(
    join(runDir, "resume-weights", "step_3"),
  );
  const w = exportFinalWeights(planOf(config).config.plugins.trainer, planOf(config).launch);
  expect(w?.source).toBe(join(runDir, "resume-weights", "step_3"));
  expect(readFileSync(join(w?.dir as string, "model.safetensors"), "utf8")).toBe("TRAINED 3");
});

test("a LoRA adapter is served on its base model; no config copied into it", async () => {
  const { config, base } = await finishedRun(["--trainer.lora=true"], {
    "adapter_model.safetensors": "A",
    "adapter_config.json": "{}",
  });
  const w = exportFinalWeights(planOf(config).config.plugins.trainer, planOf(config).launch);
  expect(w).toMatchObject({ kind: "lora", loadable: true });
  expect(existsSync(join(w?.dir as string, "config.json"))).toBe(false);
  expect(w?.serve).toBe(`vllm serve ${base} --enable-lora --lora-modules air=${w?.dir}`);
});

test("weights without a config on this machine say what to add; no finished step: nothing", async () => {
  const { config, base } = await finishedRun([], { "model.safetensors": "W" });
  rmSync(join(base, "config.json"));
  const w = exportFinalWeights(planOf(config).config.plugins.trainer, planOf(config).launch, {
    HF_HOME: tempDir("hf"),
  });
  expect(w?.loadable).toBe(false);
  expect(w?.serve).toContain("config.json and tokenizer files");
  rmSync(join(config.runDir, "progress.json"));
  expect(exportFinalWeights(planOf(config).config.plugins.trainer, planOf(config).launch)).toBeUndefined();
});

test("a tiny model's final weights are served by the tiny inference stand-in, with the trained weights", async () => {
  const out = tempDir("final-tiny");
  const config = await resolveConfig(join(REPO_ROOT, "configs", "quickstart.toml"), [
    `--run.output_dir="${out}"`,
  ]);
  const { runDir } = primeRlPaths(config);
  const dir0 = join(runDir, "broadcasts", "step_1");
  mkdirSync(dir0, { recursive: true });
  // The trainer's broadcast: the seed's model with its weights shifted (as a step would change them).
  const save = Bun.spawnSync(
    [
      "/usr/bin/python3",
      "-c",
      "import sys, torch; from air_tiny import model as tm\n" +
        "m = tm.build_model(tm.load_model_config(sys.argv[1]))\n" +
        "with torch.no_grad():\n    [p.add_(0.3) for p in m.parameters()]\n" +
        "tm.save_weights(m, sys.argv[2])",
      config.root.model.name,
      dir0,
    ],
    { env: { ...process.env, PYTHONPATH: join(REPO_ROOT, "packages", "tiny", "py") }, stderr: "pipe" },
  );
  expect(save.exitCode, save.stderr.toString()).toBe(0);
  writeFileSync(join(dir0, "STABLE"), "");
  writeProgress(config.runDir, { lastCompletedStep: 0, updatedAt: new Date().toISOString(), metrics: {} });
  const w = exportFinalWeights(planOf(config).config.plugins.trainer, planOf(config).launch);
  const dir = w?.dir as string;
  expect(w?.serve).toBe(`${join(REPO_ROOT, "packages", "tiny", "bin", "inference")} --vllm.model ${dir}`);
  // The printed command serves (on a free port, router off) the trained weights, not the seed's.
  const logprobs = async (model: string) => {
    const argv = [...(w?.serve.split(" ") ?? []).slice(0, 1), "--vllm.model", model];
    const proc = Bun.spawn([...argv, "--server.port", "0", "--router", "None"], {
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const reader = proc.stdout.getReader();
      let text = "";
      while (!text.includes("\n")) text += new TextDecoder().decode((await reader.read()).value);
      const port = (JSON.parse(text.split("\n")[0] as string) as { port: number }).port;
      const r = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: "POST",
        body: JSON.stringify({
          messages: [{ role: "user", content: "go" }],
          logprobs: true,
          seed: 1,
          max_tokens: 1,
        }),
        signal: AbortSignal.timeout(20_000),
      });
      const body = (await r.json()) as {
        choices: Array<{ logprobs: { content: Array<{ logprob: number }> } }>;
      };
      return body.choices[0]?.logprobs.content[0]?.logprob;
    } finally {
      proc.kill();
      await proc.exited;
    }
  };
  const trained = await logprobs(dir);
  const seed = await logprobs(config.root.model.name);
  expect(typeof trained).toBe("number");
  expect(trained).not.toBe(seed);
}, 120_000);

test("a LoRA adapter above vLLM's default max_lora_rank (16) is served with --max-lora-rank", async () => {
  const { config, base, runDir } = await finishedRun(["--trainer.lora=true"], {
    "adapter_model.safetensors": "A",
  });
  writeFileSync(join(runDir, "broadcasts", "step_3", "adapter_config.json"), JSON.stringify({ r: 24 }));
  const w = exportFinalWeights(planOf(config).config.plugins.trainer, planOf(config).launch);
  expect(w?.serve).toBe(`vllm serve ${base} --enable-lora --max-lora-rank 32 --lora-modules air=${w?.dir}`);
});

test("a tiny model's LoRA final weights: the printed command (the vllm stand-in) serves the adapter as `air`", async () => {
  const out = tempDir("final-tiny-lora");
  const config = await resolveConfig(join(REPO_ROOT, "configs", "quickstart.toml"), [
    `--run.output_dir="${out}"`,
    "--trainer.lora=true",
  ]);
  const step1 = join(primeRlPaths(config).runDir, "broadcasts", "step_1");
  // The trainer's LoRA broadcast of a trained step (B moved off zero), r = 32 as configs/mlgym/rl.toml trains.
  const save = Bun.spawnSync(
    [
      "/usr/bin/python3",
      "-c",
      "import sys, torch; from air_tiny import lora, model as tm\n" +
        "m = tm.build_model(tm.load_model_config(sys.argv[1]))\n" +
        "c = {**lora.LORA_DEFAULTS, 'rank': 32, 'alpha': 64.0}\nlora.apply_lora(m, c)\n" +
        "with torch.no_grad():\n    [p.add_(0.05) for n, p in m.named_parameters() if '.lora_B.' in n]\n" +
        "lora.save_adapter(m, sys.argv[2], c, sys.argv[1])",
      config.root.model.name,
      step1,
    ],
    { env: { ...process.env, PYTHONPATH: join(REPO_ROOT, "packages", "tiny", "py") }, stderr: "pipe" },
  );
  expect(save.exitCode, save.stderr.toString()).toBe(0);
  writeFileSync(join(step1, "STABLE"), "");
  writeProgress(config.runDir, { lastCompletedStep: 0, updatedAt: new Date().toISOString(), metrics: {} });
  const w = exportFinalWeights(planOf(config).config.plugins.trainer, planOf(config).launch);
  const dir = w?.dir as string;
  const vllm = join(REPO_ROOT, "packages", "tiny", "bin", "vllm");
  expect(w).toMatchObject({ kind: "lora", loadable: true });
  expect(w?.serve).toBe(
    `${vllm} serve ${config.root.model.name} --enable-lora --max-lora-rank 32 --lora-modules air=${dir}`,
  );
  const proc = Bun.spawn([...(w?.serve.split(" ") ?? []), "--host", "127.0.0.1", "--port", "0"], {
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    const reader = proc.stdout.getReader();
    let text = "";
    while (!text.includes("\n")) text += new TextDecoder().decode((await reader.read()).value);
    const port = (JSON.parse(text.split("\n")[0] as string) as { port: number }).port;
    const logprob = async (model: string) => {
      const r = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: "POST",
        body: JSON.stringify({
          model,
          messages: [{ role: "user", content: "go" }],
          logprobs: true,
          top_logprobs: 3,
        }),
        signal: AbortSignal.timeout(20_000),
      });
      const body = (await r.json()) as {
        choices: Array<{ logprobs: { content: Array<{ top_logprobs: Array<{ logprob: number }> }> } }>;
      };
      return body.choices[0]?.logprobs.content[0]?.top_logprobs.map((t) => t.logprob);
    };
    const adapted = await logprob("air");
    expect(adapted?.length).toBe(3);
    expect(adapted).not.toEqual(await logprob(config.root.model.name));
  } finally {
    proc.kill();
    await proc.exited;
  }
}, 120_000);
