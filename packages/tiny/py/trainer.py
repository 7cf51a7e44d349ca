"""Tiny CPU trainer speaking prime-rl's filesystem transport, 0.8 and 0.9 (see transport.py).

Usage: /usr/bin/python3 trainer.py --config tiny.json   (config.run_dir is required)
Loop, from step 1 (prime-rl's first orchestrator step): wait for `rollouts/step_N/train_rollouts.bin` (0.8) or
`rollouts/step_N/rank_*.bin` (0.9; every rank's file, unpacked into samples), compute
prime-rl's default loss on it, take one optimiser step, write `broadcasts/step_N/model.pt`, then
`broadcasts/step_N/STABLE`, then append the step's metrics to `metrics_file` (prime-rl's FileMonitor JSONL row).
Started again (a restart after a crash, or --resume), it continues after the newest STABLE broadcast.

The loss is prime-rl v0.8.0's `default_loss_fn` (DPPO-Binary TV masking + a squared-log-ratio KL term):
  ratio = exp(trainer_lp - inference_lp); diff = exp(trainer_lp) - exp(inference_lp)
  a token is masked when A > 0 and diff > dppo_mask_high, or A <= 0 and diff < -dppo_mask_low
  per_token = -(unmasked * adv_tau * A * ratio) + kl_tau * (trainer_lp - inference_lp)^2
  loss = sum(per_token * rl_weight) / (number of trainable tokens in the batch)
It runs on one CPU process (no micro-batch packing); AdamW with prime-rl's `max_norm` gradient clipping.
SIGTERM or SIGINT stops it between polls.
"""

import argparse
import json
import os
import signal
import sys
import time

import torch

import tiny_model as tm
import transport

stopping = False


def on_signal(_signum, _frame):
    global stopping
    stopping = True


def batch_loss(model, batch, config):
    total_tokens = 0
    terms = []
    stats = {"entropy": [], "mismatch_kl": [], "abs_diff": [], "masked": [], "ratio": []}
    for sample in batch["examples"]:
        tokens, mask = sample["token_ids"], sample["mask"]
        positions = [p for p, m in enumerate(mask) if m]
        if not positions:
            continue
        advantages = sample["advantages"] or [0.0] * len(tokens)
        weights = sample["rl_weights"]
        results = tm.sequence_logprobs(model, tokens, positions, sample["temperatures"])
        for p, (trainer_lp, entropy) in zip(positions, results):
            weight = 1.0 if weights is None else float(weights[p])
            if weight == 0.0:
                continue
            total_tokens += 1
            inference_lp = torch.tensor(float(sample["logprobs"][p]), dtype=torch.float64)
            advantage = float(advantages[p])
            log_ratio = trainer_lp - inference_lp
            ratio = torch.exp(log_ratio)
            diff = float(torch.exp(trainer_lp).item() - torch.exp(inference_lp).item())
            masked = diff > config["dppo_mask_high"] if advantage > 0 else diff < -config["dppo_mask_low"]
            pg = 0.0 if masked else config["adv_tau"] * advantage * ratio
            terms.append(weight * (-pg + config["kl_tau"] * log_ratio**2))
            stats["entropy"].append(float(entropy.item()))
            stats["mismatch_kl"].append(float((ratio - log_ratio - 1).item()))
            stats["abs_diff"].append(abs(float(log_ratio.item())))
            stats["masked"].append(1.0 if masked else 0.0)
            stats["ratio"].append(float(ratio.item()))
    if not terms:
        return None, stats, 0
    return torch.stack([torch.as_tensor(t, dtype=torch.float64) for t in terms]).sum() / total_tokens, stats, total_tokens


def mean(values):
    return sum(values) / len(values) if values else 0.0


def train_step(model, optimizer, batch, config, step):
    started = time.perf_counter()
    optimizer.zero_grad()
    loss, stats, tokens = batch_loss(model, batch, config)
    grad_norm = 0.0
    if loss is not None:
        loss.backward()
        max_norm = config["max_norm"] if config["max_norm"] is not None else float("inf")
        grad_norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm).item())
        optimizer.step()
    return {
        "step": step,
        "time": time.time(),
        "loss/mean": float(loss.item()) if loss is not None else 0.0,
        "entropy/all/mean": mean(stats["entropy"]),
        "mismatch_kl/all/mean": mean(stats["mismatch_kl"]),
        "mismatch/abs_logprob_diff/mean": mean(stats["abs_diff"]),
        "mismatch/abs_logprob_diff/max": max(stats["abs_diff"], default=0.0),
        "importance_ratio/mean": mean(stats["ratio"]),
        "is_masked/all/mean": mean(stats["masked"]),
        "optim/lr": optimizer.param_groups[0]["lr"],
        "optim/grad_norm": grad_norm,
        "progress/samples": len(batch["examples"]),
        "progress/trainable_tokens": tokens,
        "time/step": time.perf_counter() - started,
    }


def first_step(run_dir, model):
    """Resume after the newest STABLE broadcast (weights only; optimiser state starts fresh)."""
    root = os.path.join(run_dir, "broadcasts")
    done = []
    if os.path.isdir(root):
        for name in os.listdir(root):
            if name.startswith("step_") and os.path.exists(os.path.join(root, name, "STABLE")):
                done.append(int(name[5:]))
    if not done:
        return 1
    tm.load_weights(model, transport.broadcast_dir(run_dir, max(done)))
    return max(done) + 1


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", required=True)
    args = parser.parse_args()
    config = tm.load_config(args.config)
    if not config["run_dir"]:
        raise SystemExit("config.run_dir is required")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    run_dir = config["run_dir"]
    model = tm.build_model(config)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"], weight_decay=config["weight_decay"])
    step = first_step(run_dir, model)
    os.makedirs(os.path.dirname(os.path.abspath(config["metrics_file"])), exist_ok=True)
    open(config["metrics_file"], "a").close()  # created at start, as prime-rl's FileMonitor does
    print(json.dumps({"event": "ready", "step": step, "run_dir": run_dir}), flush=True)
    poll_s = config["poll_ms"] / 1000
    while not stopping and (config["max_steps"] is None or step <= config["max_steps"]):
        path = transport.step_dir(run_dir, step)
        try:
            batch = transport.read_step(run_dir, step)
        except (ValueError, TypeError, KeyError, IndexError):
            # A writer that does not rename into place may still be writing: look once more after a pause.
            time.sleep(max(poll_s, 0.2))
            try:
                batch = transport.read_step(run_dir, step)
            except (ValueError, TypeError, KeyError, IndexError) as e:
                raise SystemExit(
                    f"cannot read {path}: not a prime-rl TrainingBatch or MicroBatch list ({type(e).__name__}: {e})"
                )
        if batch is None:
            time.sleep(poll_s)
            continue
        try:
            metrics = train_step(model, optimizer, batch, config, step)
        except ValueError as e:
            raise SystemExit(f"cannot train on {path}: {e}")
        out = transport.broadcast_dir(run_dir, step)
        tm.save_weights(model, out)
        with open(os.path.join(out, "STABLE"), "w"):
            pass
        # The metrics row after STABLE, as prime-rl logs it after broadcasting: a trainer killed before STABLE and
        # restarted trains the step again from the previous weights, and its row is written once.
        with open(config["metrics_file"], "a") as f:
            f.write(json.dumps(metrics) + "\n")
        print(json.dumps({"event": "step", **metrics}), flush=True)
        step += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
