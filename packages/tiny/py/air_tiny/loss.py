"""prime-rl's default loss (`trainer/rl/loss.py` `default_loss_fn`, DPPO-Binary TV + KL) over one rank's samples.

Per trainable token: ratio = exp(trainer_lp - inference_lp); diff = exp(trainer_lp) - exp(inference_lp); the
token is masked when A > 0 and diff > dppo_mask_high, or A <= 0 and diff < -dppo_mask_low;
  loss_t = -(unmasked * adv_tau * A * ratio) + kl_tau * (trainer_lp - inference_lp)^2, times rl_weights.
As in prime-rl's train.py, each rank divides its sum by the trainable-token count of ALL ranks (one all-reduce),
and gradients are summed over ranks, so N ranks take the same step as one process over the whole batch.
"""

import time

import torch

from . import model as tm

LOSS_DEFAULTS = {"dppo_mask_low": 0.2, "dppo_mask_high": 0.2, "adv_tau": 1.0, "kl_tau": 0.001}


def local_terms(model, batch, loss):
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
            masked = diff > loss["dppo_mask_high"] if advantage > 0 else diff < -loss["dppo_mask_low"]
            pg = 0.0 if masked else loss["adv_tau"] * advantage * ratio
            terms.append(weight * (-pg + loss["kl_tau"] * log_ratio**2))
            stats["entropy"].append(float(entropy.item()))
            stats["mismatch_kl"].append(float((ratio - log_ratio - 1).item()))
            stats["abs_diff"].append(abs(float(log_ratio.item())))
            stats["masked"].append(1.0 if masked else 0.0)
            stats["ratio"].append(float(ratio.item()))
    return terms, stats, total_tokens


def all_sum(values, dist):
    """Sums a list of floats over ranks (gloo); as is on one process."""
    t = torch.tensor(values, dtype=torch.float64)
    if dist is not None:
        dist.all_reduce(t)
    return t.tolist()


def train_step(model, optimizer, batch, optim, loss, step, dist=None):
    """One optimiser step on this rank's batch, gradients summed over ranks; returns prime-rl-style metrics."""
    started = time.perf_counter()
    optimizer.zero_grad()
    terms, stats, tokens = local_terms(model, batch, loss)
    global_tokens, global_samples = all_sum([tokens, len(batch["examples"])], dist)
    scale = max(global_tokens, 1)
    local = torch.stack([torch.as_tensor(t, dtype=torch.float64) for t in terms]).sum() if terms else None
    if local is not None:
        (local / scale).backward()
    params = [p for p in model.parameters() if p.requires_grad]  # LoRA: the adapter only
    for p in params:
        if p.grad is None:
            p.grad = torch.zeros_like(p)
        if dist is not None:
            dist.all_reduce(p.grad)
    grad_norm = 0.0
    if global_tokens > 0:
        max_norm = optim["max_norm"] if optim["max_norm"] is not None else float("inf")
        grad_norm = float(torch.nn.utils.clip_grad_norm_(params, max_norm).item())
        optimizer.step()
    keys = ["entropy", "mismatch_kl", "abs_diff", "masked", "ratio"]
    sums = all_sum([float(local.item()) if local is not None else 0.0] + [sum(stats[k]) for k in keys], dist)
    largest = torch.tensor([max(stats["abs_diff"], default=0.0)], dtype=torch.float64)
    if dist is not None:
        dist.all_reduce(largest, op=dist.ReduceOp.MAX)
    n = max(global_tokens, 1)
    return {
        "step": step,
        "time": time.time(),
        "loss/mean": sums[0] / n,
        "entropy/all/mean": sums[1] / n,
        "mismatch_kl/all/mean": sums[2] / n,
        "mismatch/abs_logprob_diff/mean": sums[3] / n,
        "mismatch/abs_logprob_diff/max": float(largest.item()),
        "importance_ratio/mean": sums[5] / n if global_tokens else 0.0,
        "is_masked/all/mean": sums[4] / n,
        "optim/lr": optimizer.param_groups[0]["lr"],
        "optim/grad_norm": grad_norm,
        "progress/samples": int(global_samples),
        "progress/trainable_tokens": int(global_tokens),
        "time/step": time.perf_counter() - started,
    }
