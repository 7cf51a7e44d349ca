"""What the stand-ins take from the TOMLs air writes for prime-rl, with prime-rl's defaults (559b447 and v0.8.0;
`configs/trainer.py`, `configs/shared.py`, `configs/inference.py`, `configs/monitors.py`). Keys the stand-ins do
not model (parallelism, compile, FSDP, ...) are ignored; values they cannot honour are refused with the key."""

import os

from . import cli
from .lora import LORA_DEFAULTS
from .loss import LOSS_DEFAULTS


def lora_settings(doc):
    """`[model.lora]` (prime-rl's LoRAConfig; an empty table means its defaults), or None: full weights."""
    raw = cli.get(doc, "model.lora")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise SystemExit(f"trainer TOML: model.lora must be a table, got {raw!r}")
    lora = {**LORA_DEFAULTS, **raw}
    if not isinstance(lora["rank"], int) or lora["rank"] < 1:
        raise SystemExit(f"trainer TOML: model.lora.rank = {lora['rank']!r}: must be an integer >= 1")
    if not 0 <= float(lora["dropout"]) <= 1 or float(lora["alpha"]) < 0:
        raise SystemExit("trainer TOML: model.lora.alpha must be >= 0 and model.lora.dropout in [0, 1]")
    if lora["modules_to_save"]:
        raise SystemExit("trainer TOML: model.lora.modules_to_save: the CPU trainer trains adapters only")
    return {**lora, "alpha": float(lora["alpha"]), "dropout": float(lora["dropout"])}


def trainer_settings(doc):
    get = lambda key, default=None: cli.get(doc, key, default)  # noqa: E731
    v08 = "max_concurrent_runs" in doc or "file_monitor" in doc or cli.present(doc, "ckpt.resume_step")
    output_dir = os.path.abspath(get("output_dir", "outputs"))
    model = get("model.name")
    if not model:
        raise SystemExit("trainer TOML: [model] name is required (a tiny model directory)")
    if get("weight_broadcast.type", "filesystem") != "filesystem":
        raise SystemExit("trainer TOML: weight_broadcast.type must be filesystem for the CPU trainer")
    if get("loss.type", "default") != "default":
        raise SystemExit(f"trainer TOML: loss.type {get('loss.type')!r}: the CPU trainer computes the default loss")
    optim = doc.get("optim") or {}
    max_norm = optim.get("max_norm", 1.0)
    ckpt = doc.get("ckpt") if isinstance(doc.get("ckpt"), dict) else None
    if v08:
        resume = cli.present(doc, "ckpt.resume_step")
        resume_step = get("ckpt.resume_step")
    else:
        resume = isinstance(doc.get("resume"), dict)
        resume_step = get("resume.step")
    if resume_step is not None and resume_step < 1:
        raise SystemExit(f"trainer TOML: resume.step = {resume_step}: must be >= 1 (prime-rl's ResumeConfig)")
    transport_type = get("rollout_transport.type", "filesystem" if v08 else "zmq")
    zmq = None
    if transport_type == "zmq":
        zmq = {
            "host": get("rollout_transport.host", "localhost"),
            "port": int(get("rollout_transport.port", 5555)),
            "hwm": int(get("rollout_transport.hwm", 10)),
            "cp": int(get("model.cp", 1)),
        }
    if v08:
        name = get("file_monitor.filename")
        metrics = os.path.join(output_dir, name) if name else None
    else:
        monitor = (doc.get("monitors") or {}).get("file", {})
        metrics = None if monitor in (None, "None") else os.path.join(output_dir, monitor.get("path", "metrics.jsonl"))
    return {
        "version": "0.8" if v08 else "0.9",
        "output_dir": output_dir,
        "model": model,
        "lora": lora_settings(doc),
        "max_steps": get("max_steps"),
        "optim": {
            "lr": float(get("optim.lr", 1e-6)),
            "weight_decay": float(get("optim.weight_decay", 0.01)),
            "max_norm": None if max_norm in (None, "None") else float(max_norm),
        },
        "loss": {k: float(get(f"loss.{k}", v)) for k, v in LOSS_DEFAULTS.items()},
        "ckpt": ckpt is not None,
        "ckpt_dir": os.path.join(os.path.abspath(get("ckpt.output_dir", output_dir)), "checkpoints"),
        "ckpt_interval": get("ckpt.interval"),
        "keep_last": get("ckpt.keep_last"),
        "keep_interval": get("ckpt.keep_interval"),
        "resume": resume,
        "resume_step": resume_step,
        "zmq": zmq,
        "metrics_file": metrics,
        "dist_timeout_seconds": int(get("dist_timeout_seconds", 3600)),
        "poll_s": float(os.environ.get("AIR_TINY_POLL_S", "0.1")),
    }


def inference_settings(doc):
    """0.9 puts vLLM's options under [vllm]; 0.8 at top level with [model] name. Router: prime-rl's default is a
    vllm-router on server.port with the engine on backend_port (server.port + 100 unless set); "None" turns it off."""
    get = lambda key, default=None: cli.get(doc, key, default)  # noqa: E731
    v09 = isinstance(doc.get("vllm"), dict)
    model = get("vllm.model") if v09 else get("model.name")
    if not model:
        raise SystemExit("inference TOML: " + ("[vllm] model" if v09 else "[model] name") + " is required")
    prefix = "vllm." if v09 else ""
    router = doc.get("router", {})
    router_on = router not in (None, "None")
    port = int(get("server.port", 8000))
    backend_port = int(get("backend_port", port + 100)) if router_on else port
    return {
        "model": model,
        "host": get("server.host") or "0.0.0.0",
        "port": port,
        "router": router_on,
        "engine_port": backend_port,
        "seed": int(get(f"{prefix}seed", 0)),
        "max_model_len": get(f"{prefix}max_model_len") if v09 else get("model.max_model_len"),
        "served_model_name": get(f"{prefix}served_model_name") if v09 else get("model.served_model_name"),
        "enable_lora": bool(get(f"{prefix}enable_lora", False)),
        "max_lora_rank": int(get(f"{prefix}max_lora_rank", 16)),
    }
