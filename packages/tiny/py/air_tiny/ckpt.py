"""Checkpoints and broadcasts with prime-rl's layout and semantics (`trainer/ckpt.py`, `trainer/utils.py`,
`utils/pathing.py`, `transports/weights/filesystem.py` at 559b447):

- checkpoint of step N: `<ckpt output_dir or output_dir>/checkpoints/step_N/trainer/` (here one torch file,
  `tiny.pt`: weights, optimiser state, progress; prime-rl writes a DCP directory). Saved every `ckpt.interval`
  steps except the last, and once more after the last step; then `keep_last` / `keep_interval` prune.
- resume: `[resume] step = k` (0.8: `[ckpt] resume_step`) loads step k and trains k + 1; a missing checkpoint
  raises FileNotFoundError("Checkpoint not found at ..."), as prime-rl does. An empty `[resume]` takes the newest.
- broadcast of policy v_N: `<output_dir>/broadcasts/step_N/model.pt` (with `[model.lora]`: the adapter only,
  `adapter_config.json` + `adapter_model.safetensors`, lora.py), then `STABLE`; at start the incoming
  policy (v_{start-1}, so `step_0` on a fresh start) is broadcast before the first batch is awaited. After
  broadcasting step N, `step_{N-2}` is removed unless N-2 is a multiple of `ckpt.interval`.
"""

import os
import shutil

import torch

from . import lora as tl
from . import model as tm


def step_path(root, step):
    return os.path.join(root, f"step_{step}")


def all_steps(root):
    if not os.path.isdir(root):
        return []
    return sorted(int(n.split("_")[-1]) for n in os.listdir(root) if n.startswith("step_") and n[5:].isdigit())


class Checkpoints:
    def __init__(self, ckpt_dir, interval=None, keep_last=None, keep_interval=None, resume_step=None):
        self.dir = ckpt_dir
        self.interval, self.keep_last, self.keep_interval = interval, keep_last, keep_interval
        found = all_steps(ckpt_dir)
        self.steps = [s for s in found if resume_step is None or s <= resume_step]

    def path(self, step):
        return os.path.join(step_path(self.dir, step), "trainer")

    def save(self, step, model, optimizer, progress):
        out = self.path(step)
        os.makedirs(out, exist_ok=True)
        tmp = os.path.join(out, "tiny.pt.tmp")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "progress": progress}, tmp)
        os.replace(tmp, os.path.join(out, "tiny.pt"))
        if step not in self.steps:
            self.steps = sorted(self.steps + [step])

    def load(self, step, model, optimizer):
        path = self.path(step)
        if not os.path.exists(path):
            raise FileNotFoundError(f"Checkpoint not found at {path}")
        state = torch.load(os.path.join(path, "tiny.pt"), map_location="cpu")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        return state["progress"]

    def maybe_clean(self):
        if self.keep_last is None and self.keep_interval is None:
            return
        keep = set(self.steps[-self.keep_last :]) if self.keep_last is not None else set()
        if self.keep_interval is not None:
            keep.update(s for s in self.steps if s % self.keep_interval == 0)
        for step in self.steps:
            if step not in keep:
                shutil.rmtree(step_path(self.dir, step), ignore_errors=True)
        self.steps = [s for s in self.steps if s in keep]


def broadcast(broadcast_root, step, model, lora=None, base_model=None):
    out = step_path(broadcast_root, step)
    if lora is not None:
        tl.save_adapter(model, out, lora, base_model)
    else:
        tm.save_weights(model, out)
    with open(os.path.join(out, "STABLE"), "w"):
        pass


def clean_broadcast(broadcast_root, step, interval_to_keep):
    candidate = max(step - 2, 0)
    if interval_to_keep and candidate % interval_to_keep == 0:
        return
    shutil.rmtree(step_path(broadcast_root, candidate), ignore_errors=True)
