import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "@air/core/testing";
import { FULL_BYTES, LORA_BASE_BYTES, modelParameters } from "./ckpt-size.ts";

const TORCHRUN = resolve(import.meta.dir, "..", "..", "..", "scripts", "torchrun-sid");
const SID =
  process.env.AIR_TORCH_ROOT ?? join(process.env.HOME ?? "/root", ".cache", "air", "torch-root", "current");
const haveSid = existsSync(join(SID, ".air-built"));

// A real torch DCP save of an fp32 model and its AdamW state, then of a frozen base whose optimizer holds the
// biases only (a LoRA run's shape): the bytes per parameter the checkpoint estimate uses.
const SAVE = `
import json, os, sys, tempfile, torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict
model = torch.nn.Sequential(*[torch.nn.Linear(512, 512) for _ in range(8)])
n = sum(p.numel() for p in model.parameters())
def saved(opt):
    model(torch.randn(4, 512)).sum().backward(); opt.step()
    msd, osd = get_state_dict(model, opt)
    d = tempfile.mkdtemp()
    dcp.save({"model": msd, "optimizer": osd}, checkpoint_id=d)
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)) / n
full = saved(torch.optim.AdamW(model.parameters(), lr=1e-3))
for p in model.parameters(): p.requires_grad_(p.dim() == 1)
base = saved(torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3))
print(json.dumps({"full": full, "frozen_base": base}))
`;

test.skipIf(!haveSid)(
  "bytes per parameter: a real torch DCP save is 12 B (fp32 + AdamW) and 4 B for a frozen base, within 2%",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "air-dcp-"));
    try {
      const script = join(dir, "save.py");
      writeFileSync(script, SAVE);
      const args = [
        "--nnodes=1",
        "--nproc-per-node=1",
        `--rdzv-endpoint=127.0.0.1:${await freePort()}`,
        script,
      ];
      const out = spawnSync(TORCHRUN, args, { encoding: "utf8", timeout: 240_000 });
      const line = out.stdout.split("\n").find((l) => l.startsWith("{"));
      if (!line) throw new Error(`no result: ${out.stdout}\n${out.stderr}`);
      const measured = JSON.parse(line) as { full: number; frozen_base: number };
      expect(Math.abs(measured.full / FULL_BYTES - 1)).toBeLessThan(0.02);
      expect(Math.abs(measured.frozen_base / LORA_BASE_BYTES - 1)).toBeLessThan(0.02);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  300_000,
);

test("parameters from the model's name when no config.json is at hand", () => {
  expect(modelParameters("Qwen/Qwen3-0.6B", { HF_HOME: "/nonexistent" })).toEqual({
    count: 6e8,
    from: "the model name (0.6B)",
  });
  expect(modelParameters("Qwen/Qwen3-4B-Instruct-2507", { HF_HOME: "/nonexistent" })?.count).toBe(4e9);
  expect(modelParameters("./models/quickstart", { HF_HOME: "/nonexistent" })).toBeUndefined();
});
