"""Checkpoints and broadcasts with prime-rl's layout and semantics (`trainer/ckpt.py`, `trainer/utils.py`,
`utils/pathing.py`, `transports/weights/filesystem.py` at 559b447):

- checkpoint of step N: `<ckpt output_dir or output_dir>/checkpoints/step_N/trainer/`, written in the order
  torch.distributed.checkpoint's FileSystemWriter writes one: the payload (`__0_0.distcp`, here one torch file:
  weights, optimiser state, progress), then `.metadata` (via `.metadata.tmp` and a rename) last, so a directory
  without `.metadata` is a save that did not finish; loading one fails as DCP's does. Saved every `ckpt.interval`
  steps except the last, and once more after the last step; then `keep_last` / `keep_interval` prune.
  Strict on request (tests): `AIR_TINY_CKPT_SAVE_DELAY_S` waits that long between the payload and `.metadata` (a
  slow multi-GB save); `AIR_TINY_CKPT_STOP_AT=N` stops the trainer there when saving step N, as
  `AIR_TINY_CKPT_STOP_HOW` says (`kill`: SIGKILL itself, the default; `exit`: exit 1; `hang`: wait until killed),
  once per `AIR_TINY_CKPT_STOP_ONCE` file when that is set (it is created just before stopping).
- resume: `[resume] step = k` (0.8: `[ckpt] resume_step`) loads step k and trains k + 1; a missing checkpoint
  raises FileNotFoundError("Checkpoint not found at ..."), as prime-rl does. An empty `[resume]` takes the newest.
- broadcast of policy v_N: `<output_dir>/broadcasts/step_N/model.pt` (with `[model.lora]`: the adapter only,
  `adapter_config.json` + `adapter_model.safetensors`, lora.py), then `STABLE`, all written whole before they are
  visible: into a fresh `.step_N.tmp` dir renamed to `step_N`; when `step_N` is already there (a restarted trainer
  broadcasts its start step again) each file replaces the old one by a rename, never truncating it in place; at start the incoming
  policy (v_{start-1}, so `step_0` on a fresh start) is broadcast before the first batch is awaited. After
  broadcasting step N, `step_{N-2}` is removed unless N-2 is a multiple of `ckpt.interval`.
"""

import json
import os
import shutil
import signal
import time

import torch

from . import lora as tl
from . import model as tm

PAYLOAD = "__0_0.distcp"
METADATA = ".metadata"


def between_payload_and_metadata(step):
    """The test hooks of a save (module docstring): a slow save, or a trainer that dies before `.metadata`."""
    delay = float(os.environ.get("AIR_TINY_CKPT_SAVE_DELAY_S") or 0)
    if delay > 0:
        time.sleep(delay)
    stop_at = os.environ.get("AIR_TINY_CKPT_STOP_AT")
    if not stop_at or int(stop_at) != step:
        return
    if not first_stop(os.environ.get("AIR_TINY_CKPT_STOP_ONCE"), step):
        return
    how = os.environ.get("AIR_TINY_CKPT_STOP_HOW") or "kill"
    print(f"air_tiny: stopping ({how}) between the payload and .metadata of checkpoint step {step}", flush=True)
    if how == "exit":
        os._exit(1)
    if how == "hang":
        while True:
            time.sleep(3600)
    os.kill(os.getpid(), signal.SIGKILL)


def first_stop(once, step):
    """False when the `once` file exists (a stop happened already); else creates it (when set) and returns True."""
    if once:
        if os.path.exists(once):
            return False
        with open(once, "w") as f:
            f.write(f"{step}\n")
    return True


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
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "progress": progress}
        torch.save(state, os.path.join(out, PAYLOAD))
        between_payload_and_metadata(step)
        tmp = os.path.join(out, METADATA + ".tmp")
        with open(tmp, "w") as f:
            json.dump({"files": [PAYLOAD], "progress": progress}, f)
        os.replace(tmp, os.path.join(out, METADATA))
        if step not in self.steps:
            self.steps = sorted(self.steps + [step])

    def load(self, step, model, optimizer):
        path = self.path(step)
        if not os.path.exists(path):
            raise FileNotFoundError(f"Checkpoint not found at {path}")
        if not os.path.exists(os.path.join(path, METADATA)):
            # what DCP's FileSystemReader.read_metadata meets in a save that never finished
            raise FileNotFoundError(f"[Errno 2] No such file or directory: '{os.path.join(path, METADATA)}'")
        state = torch.load(os.path.join(path, PAYLOAD), map_location="cpu")
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
    tmp = os.path.join(broadcast_root, f".step_{step}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    if lora is not None:
        tl.save_adapter(model, tmp, lora, base_model)
    else:
        tm.save_weights(model, tmp)
    with open(os.path.join(tmp, "STABLE"), "w"):
        pass
    try:
        os.rename(tmp, out)
        return
    except OSError:
        pass  # step_N is there already: replace its files one by one (STABLE last), each by a rename
    names = sorted(os.listdir(tmp), key=lambda n: n == "STABLE")
    for name in names:
        os.replace(os.path.join(tmp, name), os.path.join(out, name))
    os.rmdir(tmp)


def clean_broadcast(broadcast_root, step, interval_to_keep):
    candidate = max(step - 2, 0)
    if interval_to_keep and candidate % interval_to_keep == 0:
        return
    shutil.rmtree(step_path(broadcast_root, candidate), ignore_errors=True)
