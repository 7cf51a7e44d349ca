"""CPU stand-in for prime-rl's RL trainer (`prime_rl.trainer.rl.train`), started the same way:

  torchrun <prime-rl's argv> -m air_tiny.trainer @ trainer.toml     (N data-parallel ranks, gloo)
  python3 -m air_tiny.trainer @ trainer.toml                         (one rank, like prime-rl's `trainer`)

It reads the trainer TOML air writes for prime-rl (0.8 and 0.9 layouts; see settings.py) and the tiny model
directory named by `[model] name`. Each rank reads only its own data rank's batch (0.9: `rank_R.bin` or the ZMQ
topic `data_rank|R|`; 0.8: samples R, R + N, ... of `train_rollouts.bin`), computes prime-rl's default loss
(loss.py), gradients are summed over ranks, and rank 0 broadcasts the weights (`broadcasts/step_N/model.pt`, or
with `[model.lora]` only the adapter, lora.py; then `STABLE`; `step_0` at start), checkpoints and prunes as prime-rl does (ckpt.py), and appends the step's
metrics row (prime-rl's FileMonitor JSONL) after STABLE. SIGTERM or SIGINT stops it between polls (exit 0).
Broadcasts are written whole (ckpt.py), or in place as prime-rl writes them with `AIR_TINY_BROADCAST_IN_PLACE=1`
(in_place.py); `AIR_TINY_STOP_AFTER_STEP=N` kills it after step N's checkpoint, before its row (tests).
"""

import json
import os
import signal
import sys
import time
from datetime import timedelta

import torch

from . import ckpt as ck
from . import cli
from . import in_place
from . import model as tm
from . import transport
from .lora import apply_lora
from .loss import train_step
from .settings import trainer_settings

stopping = False


def on_signal(_signum, _frame):
    global stopping
    stopping = True


def say(event, **fields):
    print(json.dumps({"event": event, **fields}), flush=True)


def world():
    rank, size = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    return rank, size


def init_dist(size, timeout_s):
    if size <= 1:
        return None
    import torch.distributed as dist

    timeout = timedelta(seconds=timeout_s)
    if os.environ.get("USE_LIBUV") == "0" and os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True":
        # Debian's torch has no libuv, and the env:// rendezvous connects to torchrun's store with libuv whatever
        # USE_LIBUV says: connect to the agent's store (MASTER_ADDR:MASTER_PORT) as a plain TCPStore client.
        addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
        store = dist.TCPStore(addr, port, size, False, timeout=timeout, use_libuv=False)
        dist.init_process_group("gloo", store=store, rank=int(os.environ["RANK"]), world_size=size, timeout=timeout)
    else:
        dist.init_process_group("gloo", timeout=timeout)
    return dist


def find_run_dir(s):
    """0.8: the orchestrator's run dir, `<output_dir>/run_*` with control/orch.toml (waits for it)."""
    if s["version"] == "0.9":
        return s["output_dir"]
    while not stopping:
        root = s["output_dir"]
        runs = sorted(n for n in os.listdir(root) if n.startswith("run_")) if os.path.isdir(root) else []
        for name in runs:
            if os.path.exists(os.path.join(root, name, "control", "orch.toml")):
                return os.path.join(root, name)
        time.sleep(s["poll_s"])
    return None


def next_batch(s, run_dir, step, rank, size, receiver):
    """This rank's batch of `step`, waiting for it (None when stopped). Logs what it waits for every 60 s."""
    waited, started = 0.0, time.monotonic()
    what = f"zmq topic data_rank|{rank}|" if receiver else os.path.join(transport.step_dir(run_dir, step), f"rank_{rank}.bin")
    while not stopping:
        if receiver is not None:
            batch = receiver.receive(step, int(s["poll_s"] * 1000))
        else:
            read = transport.read_shard if s["version"] == "0.8" else transport.read_rank
            args = (run_dir, step, rank, size) if s["version"] == "0.8" else (run_dir, step, rank)
            try:
                batch = read(*args)
            except (ValueError, TypeError, KeyError, IndexError):
                time.sleep(max(s["poll_s"], 0.2))  # a writer that does not rename into place may still be writing
                try:
                    batch = read(*args)
                except (ValueError, TypeError, KeyError, IndexError) as e:
                    raise SystemExit(f"rank {rank}: cannot read step {step}: not a prime-rl batch ({type(e).__name__}: {e})")
            if batch is None:
                time.sleep(s["poll_s"])
        if batch is not None:
            return batch
        if time.monotonic() - started - waited >= 60:
            waited = time.monotonic() - started
            print(f"rank {rank}: waiting for step {step} ({what}) for {waited:.0f} s", file=sys.stderr, flush=True)
    return None


def main(argv=None):
    s = trainer_settings(cli.load(sys.argv[1:] if argv is None else argv))
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    rank, size = world()
    dist = init_dist(size, s["dist_timeout_seconds"])
    master = rank == 0
    _, model = tm.load_pretrained(s["model"])
    if s["lora"] is not None:
        apply_lora(model, s["lora"])  # base frozen; checkpoints hold base + adapter, broadcasts the adapter only
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=s["optim"]["lr"], weight_decay=s["optim"]["weight_decay"])
    ckpts = ck.Checkpoints(s["ckpt_dir"], s["ckpt_interval"], s["keep_last"], s["keep_interval"], s["resume_step"])
    progress = {"step": 1, "total_tokens": 0, "total_samples": 0}
    if s["resume"]:
        step = s["resume_step"] if s["resume_step"] is not None else (ckpts.steps[-1] if ckpts.steps else None)
        if step is not None:
            progress = ckpts.load(step, model, optimizer)
            progress["step"] += 1
    run_dir = find_run_dir(s)
    if run_dir is None:
        return 0
    broadcasts = os.path.join(run_dir, "broadcasts")
    if s["metrics_file"] and master:
        os.makedirs(os.path.dirname(s["metrics_file"]), exist_ok=True)
        open(s["metrics_file"], "a").close()  # created at start, as prime-rl's FileMonitor does
    receiver = transport.ZmqReceiver(**s["zmq"], rank=rank, world_size=size) if s["zmq"] else None
    step = progress["step"]
    if dist is not None:
        dist.barrier()
    if master:
        # the incoming policy, before waiting for its rollouts (a restarted trainer's: a step broadcast before)
        broadcast(broadcasts, step - 1, model, s, restart=step - 1 > 0)
    say("ready", step=step, run_dir=run_dir, rank=rank, world_size=size)
    finished = False
    while not stopping:
        last = s["max_steps"] is not None and step >= s["max_steps"]
        batch = next_batch(s, run_dir, step, rank, size, receiver)
        if batch is None:
            break
        try:
            metrics = train_step(model, optimizer, batch, s["optim"], s["loss"], step, dist)
        except ValueError as e:
            raise SystemExit(f"rank {rank}: cannot train on step {step}: {e}")
        progress.update(step=step, total_samples=progress["total_samples"] + metrics["progress/samples"])
        progress["total_tokens"] += metrics["progress/trainable_tokens"]
        if master:
            broadcast(broadcasts, step, model, s)
            ck.clean_broadcast(broadcasts, step, s["ckpt_interval"])
        if s["ckpt_interval"] and not last and step % s["ckpt_interval"] == 0:
            save(ckpts, step, model, optimizer, progress, dist, master)
        stop_before_row(step)
        if master:
            # The metrics row after STABLE, as prime-rl logs it after broadcasting: a trainer killed before STABLE
            # and restarted trains the step again, and its row is written once.
            if s["metrics_file"]:
                with open(s["metrics_file"], "a") as f:
                    f.write(json.dumps(metrics) + "\n")
            say("step", **metrics)
        if last:
            finished = True
            break
        step += 1
    if finished and s["ckpt"]:
        save(ckpts, step, model, optimizer, progress, dist, master)
    if receiver is not None:
        receiver.close()
    return 0


def broadcast(root, step, model, s, restart=False):
    """prime-rl's broadcast of `step`: written whole (ckpt.py), or in place as prime-rl does (in_place.py)."""
    if in_place.enabled():
        in_place.broadcast(root, step, model, s["lora"], s["model"], in_place.slow_s() if restart else 0.0)
    else:
        ck.broadcast(root, step, model, s["lora"], s["model"])


def stop_before_row(step):
    """`AIR_TINY_STOP_AFTER_STEP=N` (tests): SIGKILL itself after step N's broadcast and checkpoint, before its
    metrics row; once per `AIR_TINY_STOP_ONCE` file when that is set (created just before stopping)."""
    at = os.environ.get("AIR_TINY_STOP_AFTER_STEP")
    if not at or int(at) != step:
        return
    if not ck.first_stop(os.environ.get("AIR_TINY_STOP_ONCE"), step):
        return
    print(f"air_tiny: stopping (kill) after the broadcast and checkpoint of step {step}, before its metrics row", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


def save(ckpts, step, model, optimizer, progress, dist, master):
    if dist is not None:
        dist.barrier()
    if master:
        ckpts.save(step, model, optimizer, dict(progress))
        ckpts.maybe_clean()


if __name__ == "__main__":
    sys.exit(main())
