"""prime-rl's filesystem broadcast as it writes files (`transports/weights/filesystem.py`, `utils/weights.py` at
559b447), for `AIR_TINY_BROADCAST_IN_PLACE=1`: `broadcasts/step_N` is created if missing (`mkdir(exist_ok=True)`),
each weights file is written where it is read (safetensors' `save_file` opens it for writing, truncating a file
already there), then `STABLE` is touched. A restarted or resumed trainer broadcasts its start step again into a
directory that already has `STABLE`, so a reader of that step can see a truncated or half-written file.

`AIR_TINY_BROADCAST_SLOW_S=S` (tests) pauses S seconds in the middle of the weights file of such a start broadcast
(a step > 0: the weights of a step broadcast before), after half its bytes are on disk: a multi-GB save in progress.
Each in-place broadcast logs `broadcast_in_place` events (`begin`, `end`) with the time, on stdout.
"""

import io
import json
import os
import time

import torch

from . import lora as tl
from . import safetensors_file

STABLE = "STABLE"


def enabled():
    return os.environ.get("AIR_TINY_BROADCAST_IN_PLACE") == "1"


def slow_s():
    return float(os.environ.get("AIR_TINY_BROADCAST_SLOW_S") or 0)


def write(path, data, pause_s):
    """Writes `data` into `path` in place (truncating it first), pausing `pause_s` after half of it."""
    half = len(data) // 2
    with open(path, "wb") as f:
        f.write(data[:half])
        f.flush()
        os.fsync(f.fileno())
        if pause_s > 0:
            time.sleep(pause_s)
        f.write(data[half:])


def files(model, lora, base_model):
    """name -> bytes of a broadcast: the adapter (LoRA) or the full weights."""
    if lora is not None:
        config = json.dumps(tl.adapter_config(model, lora, base_model), indent=2).encode()
        return {tl.WEIGHTS_FILE: safetensors_file.dumps(tl.adapter_state_dict(model)), tl.CONFIG_FILE: config}
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    return {"model.pt": buf.getvalue()}


def broadcast(broadcast_root, step, model, lora=None, base_model=None, pause_s=0.0):
    out = os.path.join(broadcast_root, f"step_{step}")
    os.makedirs(out, exist_ok=True)
    rewrite = os.path.exists(os.path.join(out, STABLE))
    print(json.dumps({"event": "broadcast_in_place", "phase": "begin", "step": step, "rewrite": rewrite, "t": time.time()}), flush=True)
    for i, (name, data) in enumerate(files(model, lora, base_model).items()):
        write(os.path.join(out, name), data, pause_s if i == 0 else 0.0)  # the weights file comes first
    with open(os.path.join(out, STABLE), "a"):
        pass
    print(json.dumps({"event": "broadcast_in_place", "phase": "end", "step": step, "t": time.time()}), flush=True)
