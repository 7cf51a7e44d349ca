"""prime-rl's default loss (`trainer/rl/loss.py` `default_loss_fn`, DPPO-Binary TV + KL) over one rank's samples.

Per trainable token: ratio = exp(trainer_lp - inference_lp); diff = exp(trainer_lp) - exp(inference_lp); the
token is masked when A > 0 and diff > dppo_mask_high, or A <= 0 and diff < -dppo_mask_low;
  loss_t = -(unmasked * adv_tau * A * ratio) + kl_tau * (trainer_lp - inference_lp)^2, times rl_weights.
As in prime-rl's train.py, each rank divides its sum by the trainable-token count of ALL ranks (one all-reduce),
and gradients are summed over ranks, so N ranks take the same step as one process over the whole batch.

Logged as prime-rl logs them (train.py `tensors`, utils.py `Tensors.compute_stats` at 559b447): `loss/mean` is the
mean over every rank's micro-batches of each micro-batch's scaled loss (its tokens' sum ÷ the global token count),
i.e. the batch loss ÷ the number of micro-batches on all ranks; `is_masked/mean` and `/max` are over per-sample
fractions (loss.py `_safe_mean(is_masked, loss_mask)` per sequence: a sequence without a trainable token counts 0
when it has no `rl_weights`); `entropy/all/mean` and `mismatch_kl/all/mean` are over trainable tokens.
"""

import time

import torch

from . import model as tm

LOSS_DEFAULTS = {"dppo_mask_low": 0.2, "dppo_mask_high": 0.2, "adv_tau": 1.0, "kl_tau": 0.001}


def local_terms(model, batch, loss):
    """(loss terms by micro-batch index, token stats, per-sample masked fractions, trainable-token count)."""
    total_tokens = 0
    terms = {}
    stats = {"entropy": [], "mismatch_kl": [], "abs_diff": [], "ratio": []}
    masked_fractions = []
    for sample in batch["examples"]:
        tokens, mask = sample["token_ids"], sample["mask"]
        positions = [p for p, m in enumerate(mask) if m]
        if not positions:
            continue
        sample_masked, sample_tokens = 0, 0
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
            terms.setdefault(sample.get("micro_batch", 0), []).append(weight * (-pg + loss["kl_tau"] * log_ratio**2))
            sample_tokens += 1
            sample_masked += 1 if masked else 0
            stats["entropy"].append(float(entropy.item()))
            stats["mismatch_kl"].append(float((ratio - log_ratio - 1).item()))
            stats["abs_diff"].append(abs(float(log_ratio.item())))
            stats["ratio"].append(float(ratio.item()))
        if sample_tokens:
            masked_fractions.append(sample_masked / sample_tokens)
        elif weights is None:
            masked_fractions.append(0.0)
    masked_fractions.extend([0.0] * batch.get("empty_sequences", 0))
    return terms, stats, masked_fractions, total_tokens


def all_sum(values, dist):
    """Sums a list of floats over ranks (gloo); as is on one process."""
    t = torch.tensor(values, dtype=torch.float64)
    if dist is not None:
        dist.all_reduce(t)
    return t.tolist()


def all_max(values, dist):
    t = torch.tensor(values, dtype=torch.float64)
    if dist is not None:
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.tolist()


def train_step(model, optimizer, batch, optim, loss, step, dist=None):
    """One optimiser step on this rank's batch, gradients summed over ranks; returns prime-rl-style metrics."""
    started = time.perf_counter()
    optimizer.zero_grad()
    terms, stats, masked_fractions, tokens = local_terms(model, batch, loss)
    micro_batches = batch.get("micro_batches", 1)
    global_tokens, global_samples, global_micro_batches = all_sum([tokens, len(batch["examples"]), micro_batches], dist)
    scale = max(global_tokens, 1)
    # prime-rl's compute_loss: each micro-batch's loss is its tokens' sum over the global token count (rl_scale)
    scaled = [torch.stack([torch.as_tensor(t, dtype=torch.float64) for t in ts]).sum() / scale for ts in terms.values()]
    if scaled:
        torch.stack(scaled).sum().backward()
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
    keys = ["entropy", "mismatch_kl", "abs_diff", "ratio"]
    local_loss = sum(float(x.item()) for x in scaled)
    sums = all_sum([local_loss, sum(masked_fractions), len(masked_fractions)] + [sum(stats[k]) for k in keys], dist)
    loss_sum, masked_sum, masked_count, entropy, mismatch_kl, abs_diff, ratio = sums
    largest, masked_max = all_max([max(stats["abs_diff"], default=0.0), max(masked_fractions, default=0.0)], dist)
    n = max(global_tokens, 1)
    return {
        "step": step,
        "time": time.time(),
        "loss/mean": loss_sum / max(global_micro_batches, 1),
        "entropy/all/mean": entropy / n,
        "mismatch_kl/all/mean": mismatch_kl / n,
        "mismatch/abs_logprob_diff/mean": abs_diff / n,
        "mismatch/abs_logprob_diff/max": largest,
        "importance_ratio/mean": ratio / n if global_tokens else 0.0,
        "is_masked/mean": masked_sum / max(masked_count, 1),
        "is_masked/max": masked_max,
        "optim/lr": optimizer.param_groups[0]["lr"],
        "optim/grad_norm": grad_norm,
        "progress/samples": int(global_samples),
        "progress/trainable_tokens": int(global_tokens),
        "time/step": time.perf_counter() - started,
    }
