import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TINY_PY_DIR, TINY_PYTHON } from "./scripts.ts";

// AIR_TINY_BROADCAST_IN_PLACE=1 (in_place.py): a re-broadcast truncates and rewrites the adapter file where the
// server reads it, as prime-rl's `save_file` does, so a reader during a slow write gets a file it cannot load.
const SCRIPT = `
import os, threading, time, torch
from air_tiny import in_place, lora, safetensors_file
d = os.environ["DIR"]
path = os.path.join(d, lora.WEIGHTS_FILE)
old = {"m.lora_A.weight": torch.zeros(4, 64), "m.lora_B.weight": torch.zeros(64, 4)}
new = {"m.lora_A.weight": torch.ones(4, 64), "m.lora_B.weight": torch.ones(64, 4)}
safetensors_file.save(old, path)
inode = os.stat(path).st_ino
writer = threading.Thread(target=in_place.write, args=(path, safetensors_file.dumps(new), 1.5))
writer.start()
time.sleep(0.5)
try:
    safetensors_file.load(path)
    print("mid-write: loaded")
except Exception as e:
    print("mid-write: unreadable", type(e).__name__)
print("same inode:", os.stat(path).st_ino == inode)
writer.join()
print("after:", bool((safetensors_file.load(path)["m.lora_A.weight"] == 1).all()))
`;

test("an in-place rewrite of an adapter keeps its inode and is unreadable half-way, whole afterwards", () => {
  const dir = mkdtempSync(join(tmpdir(), "air-in-place-"));
  const out = Bun.spawnSync([TINY_PYTHON, "-c", SCRIPT], {
    env: { ...process.env, PYTHONPATH: TINY_PY_DIR, DIR: dir },
    stdout: "pipe",
    stderr: "pipe",
  });
  rmSync(dir, { recursive: true, force: true });
  expect(out.stderr.toString()).toBe("");
  const lines = out.stdout.toString().trim().split("\n");
  expect(lines[0]).toStartWith("mid-write: unreadable");
  expect(lines.slice(1)).toEqual(["same inode: True", "after: True"]);
}, 60_000);
