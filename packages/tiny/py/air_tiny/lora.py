"""LoRA as prime-rl trains it (`trainer/lora.py`, `models/layers/lora/multi_linear.py` at 559b447) and vLLM serves
it: each targeted nn.Linear becomes `base(x) + lora_B(lora_A(dropout(x))) * alpha / r` with every base weight
frozen. A starts as nn.Linear's default init (kaiming-uniform, a = sqrt 5, as prime-rl and PEFT), B at zero, so a
fresh adapter changes nothing.

Targets: `[model.lora] target_modules` (prime-rl's default list): a plain name matches any component of a linear
layer's path, a name with regex metacharacters is searched in it; none found is an error, as in prime-rl.
On disk, prime-rl's broadcast layout, which PEFT and vLLM load: `adapter_config.json` (prime-rl's
`save_lora_config` fields) and `adapter_model.safetensors` holding `<module path>.lora_A.weight` [r, in] and
`<module path>.lora_B.weight` [out, r] (prime-rl's names; PEFT's `base_model.model.` prefix is accepted on load).
"""

import copy
import json
import os
import re

import torch
from torch import nn

from . import safetensors_file

CONFIG_FILE = "adapter_config.json"
WEIGHTS_FILE = "adapter_model.safetensors"
PEFT_PREFIX = "base_model.model."

# prime-rl's LoRAConfig defaults (packages/prime-rl-configs/src/prime_rl/configs/trainer.py at 559b447)
LORA_DEFAULTS = {
    "rank": 16,
    "alpha": 32.0,
    "dropout": 0.0,
    "target_modules": [
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
        "experts",
        "fc1_latent_proj",
        "fc2_latent_proj",
    ],
    "modules_to_save": [],
}


class LoRALinear(nn.Module):
    def __init__(self, base_layer, rank, alpha, dropout=0.0):
        super().__init__()
        self.base_layer = base_layer
        dtype = base_layer.weight.dtype
        self.lora_A = nn.Linear(base_layer.in_features, rank, bias=False, dtype=dtype)
        self.lora_B = nn.Linear(rank, base_layer.out_features, bias=False, dtype=dtype)
        nn.init.zeros_(self.lora_B.weight)
        self.lora_dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.scaling = alpha / rank

    def forward(self, x):
        return self.base_layer(x) + self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling


def matches(name, pattern):
    if any(c in pattern for c in ".*+?^$[]{}|()\\"):
        return re.search(pattern, name) is not None
    return pattern in name.split(".")


def apply_lora(model, lora):
    """Wraps the targeted linear layers in place and freezes everything but the adapter; returns their paths."""
    patterns = lora["target_modules"]
    names = [n for n, m in model.named_modules() if isinstance(m, nn.Linear) and any(matches(n, p) for p in patterns)]
    if not names:
        raise ValueError(f"No LoRA target modules found for patterns {patterns}.")
    for name in names:
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        setattr(parent, child, LoRALinear(getattr(parent, child), lora["rank"], lora["alpha"], lora["dropout"]))
    for pname, p in model.named_parameters():
        p.requires_grad = is_adapter_key(pname)
    return names


def is_adapter_key(name):
    return ".lora_A." in name or ".lora_B." in name


def adapter_state_dict(model):
    return {k: v.detach() for k, v in model.state_dict().items() if is_adapter_key(k)}


def adapter_config(model, lora, base_model):
    """adapter_config.json's fields as prime-rl's `save_lora_config` writes them."""
    targets = sorted({n.split(".")[-1] for n, m in model.named_modules() if isinstance(m, LoRALinear)})
    return {
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "base_model_name_or_path": base_model,
        "r": lora["rank"],
        "lora_alpha": lora["alpha"],
        "lora_dropout": lora["dropout"],
        "bias": "none",
        "target_modules": targets,
        "modules_to_save": None,
    }


def save_adapter(model, directory, lora, base_model):
    """prime-rl's LoRA broadcast: the adapter weights and adapter_config.json, never the base weights."""
    os.makedirs(directory, exist_ok=True)
    safetensors_file.save(adapter_state_dict(model), os.path.join(directory, WEIGHTS_FILE))
    with open(os.path.join(directory, CONFIG_FILE), "w") as f:
        json.dump(adapter_config(model, lora, base_model), f, indent=2)


def load_adapter(directory):
    """(adapter_config.json, adapter tensors) of a PEFT adapter dir, as vLLM reads one: adapter_model.safetensors,
    else adapter_model.bin / .pt (torch files). FileNotFoundError when the files are not there (yet)."""
    config_path = os.path.join(directory, CONFIG_FILE)
    if not os.path.isfile(config_path):
        raise FileNotFoundError(f"No adapter found for {directory} (no {CONFIG_FILE})")
    with open(config_path) as f:
        config = json.load(f)
    if config.get("peft_type", "LORA") != "LORA":
        raise ValueError(f"{config_path}: peft_type {config.get('peft_type')!r} is not LORA")
    weights = os.path.join(directory, WEIGHTS_FILE)
    if os.path.isfile(weights):
        tensors = safetensors_file.load(weights)
    else:
        torch_files = [p for p in ("adapter_model.bin", "adapter_model.pt") if os.path.isfile(os.path.join(directory, p))]
        if not torch_files:
            raise FileNotFoundError(f"No adapter weights in {directory} ({WEIGHTS_FILE}, adapter_model.bin or .pt)")
        tensors = torch.load(os.path.join(directory, torch_files[0]), map_location="cpu", weights_only=True)
    tensors = {k[len(PEFT_PREFIX) :] if k.startswith(PEFT_PREFIX) else k: v for k, v in tensors.items()}
    return config, tensors


def adapted_model(base, config, tensors):
    """A deep copy of `base` with the adapter applied; `base` itself is not modified."""
    targets = config.get("target_modules") or []
    lora = {
        "rank": int(config["r"]),
        "alpha": float(config.get("lora_alpha", config["r"])),
        "dropout": 0.0,
        "target_modules": [targets] if isinstance(targets, str) else list(targets),
    }
    model = copy.deepcopy(base)
    apply_lora(model, lora)
    state = model.state_dict()
    expected = {k for k in state if is_adapter_key(k)}
    if set(tensors) != expected:
        unknown, missing = sorted(set(tensors) - expected), sorted(expected - set(tensors))
        raise ValueError(f"adapter tensors do not match the model's target modules: unknown {unknown[:4]}, missing {missing[:4]}")
    for k, v in tensors.items():
        if tuple(v.shape) != tuple(state[k].shape):
            raise ValueError(f"adapter tensor {k} has shape {tuple(v.shape)}, the model needs {tuple(state[k].shape)}")
        state[k] = v.to(state[k].dtype)
    model.load_state_dict(state)
    model.eval()
    return model
