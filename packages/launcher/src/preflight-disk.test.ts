import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { resolveConfig } from "./cli.ts";
import { checkCheckpointDisk } from "./preflight-disk.ts";
import { planOf } from "./run-plan.ts";

const REPO = resolve(import.meta.dir, "..", "..", "..");
const RL = join(import.meta.dir, "bin", "rl.ts");
const GPU_CONFIGS = [
  "dataset/default.toml",
  "dataset/full.toml",
  "dataset/distributed.toml",
  "mlgym/rl.toml",
  "mlgym/rl_debug.toml",
  "mlgym/multi-host.toml",
];

describe("rl check: trainer checkpoints against the free space under the output dir", () => {
  for (const name of GPU_CONFIGS)
    test(`rl check on configs/${name} prints the checkpoint estimate`, () => {
      const out = spawnSync(process.execPath, [RL, "check", join(REPO, "configs", name)], {
        encoding: "utf8",
        cwd: mkdtempSync(join(tmpdir(), "air-ckpt-check-")),
        timeout: 60_000,
      });
      const line = out.stdout.split("\n").find((l) => l.includes("trainer checkpoints fit on disk:"));
      expect(line).toMatch(/GB per checkpoint \(\d\.\d\dB parameters from .+ × (12|4) B/);
      expect(line).toMatch(/one every \d+ step\(s\) \(trainer_process\.ckpt_interval\)/);
      expect(line).toMatch(/GB free under \//);
    }, 60_000);

  test("a disk too small for them refuses with the numbers and the keys that change them", async () => {
    const config = await resolveConfig(join(REPO, "configs", "dataset", "full.toml"), []);
    const small = () => ({ free: 50e9, total: 100e9 });
    const [check] = checkCheckpointDisk(planOf(config), {}, small);
    expect(check?.status).toBe("fail");
    expect(check?.message).toContain(
      "48.0 GB per checkpoint (4.00B parameters from the model name (4B) × 12 B",
    );
    expect(check?.message).toContain("= 96.0 GB");
    expect(check?.message).toContain("50.0 GB free under");
    expect(check?.message).toContain("change trainer_process.ckpt_interval / trainer_process.ckpt_keep_last");
    const roomy = () => ({ free: 97e9, total: 200e9 });
    expect(checkCheckpointDisk(planOf(config), {}, roomy)[0]?.status).toBe("ok");
    const lora = await resolveConfig(join(REPO, "configs", "mlgym", "rl.toml"), []);
    expect(checkCheckpointDisk(planOf(lora), {}, small)[0]?.message).toContain("16.0 GB per checkpoint");
  });

  test("a config.json in the Hugging Face cache gives the parameter count (Qwen3-4B's layout)", async () => {
    const hf = mkdtempSync(join(tmpdir(), "air-hf-"));
    const snap = join(hf, "hub", "models--Qwen--Qwen3-4B", "snapshots", "abc");
    await Bun.write(
      join(snap, "config.json"),
      JSON.stringify({
        hidden_size: 2560,
        num_hidden_layers: 36,
        intermediate_size: 9728,
        vocab_size: 151936,
        num_attention_heads: 32,
        num_key_value_heads: 8,
        head_dim: 128,
        tie_word_embeddings: true,
      }),
    );
    const config = await resolveConfig(join(REPO, "configs", "dataset", "full.toml"), []);
    const [check] = checkCheckpointDisk(planOf(config), { HF_HOME: hf }, () => ({ free: 1e12, total: 1e12 }));
    // Qwen3-4B: 4.02B parameters (its model card), so 48.3 GB at 12 B each.
    expect(check?.message).toContain(
      `48.3 GB per checkpoint (4.02B parameters from ${join(snap, "config.json")}`,
    );
  });
});
