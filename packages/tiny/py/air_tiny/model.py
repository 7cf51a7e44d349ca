"""The tiny policy shared by inference.py and trainer.py: model config, tokenizer, model and exact logprobs.

Token ids: 0..255 are prompt bytes, 256 is EOS, 257 is PAD (input only), 258 + i is command i.
Chat template: `<|role|>\n` + content + `\n` per message, then `<|assistant|>\n` (see encode_chat).
The output head scores EOS and every command (index 0 = EOS, index 1 + i = command i). After a command
token the model emits EOS with probability 1 (a structural rule both sides apply), so a completion is
[command, EOS] and every reported logprob is exact.
"""

import json
import math
import os

import torch
from torch import nn

EOS = 256
PAD = 257
FIRST_COMMAND = 258

MODEL_TYPE = "air-tiny"

# config.json fields of a tiny model directory and their defaults (`model_type` must be "air-tiny").
MODEL_DEFAULTS = {
    "seed": 0,
    "context_tokens": 64,
    "d_model": 32,
    "layers": 1,
    "heads": 2,
    "max_position_embeddings": 32768,
    "discussion": "Next I run this command.",
}


def load_model_config(name):
    """The model of `[model] name` (trainer TOML) or `vllm.model` / `model.name` (inference TOML): a directory
    with an HF-style config.json whose model_type is "air-tiny"."""
    path = os.path.join(name, "config.json")
    if not os.path.isfile(path):
        raise ValueError(f"model {name!r}: no {path} (a tiny model is a directory with config.json, model_type {MODEL_TYPE!r})")
    with open(path) as f:
        raw = json.load(f)
    if raw.get("model_type") != MODEL_TYPE:
        raise ValueError(f"{path}: model_type is {raw.get('model_type')!r}, not {MODEL_TYPE!r}")
    config = {**MODEL_DEFAULTS, **raw}
    commands = config.get("commands")
    if not isinstance(commands, list) or not commands or not all(isinstance(c, str) and c for c in commands):
        raise ValueError(f"{path}: commands must be a non-empty list of non-empty strings")
    if config["d_model"] % config["heads"] != 0:
        raise ValueError(f"{path}: d_model must be a multiple of heads")
    return config


def load_pretrained(name):
    """The model directory `name` as HF's from_pretrained reads one: its config.json, and its weights
    (`model.pt`, what the trainer broadcasts and `final-weights` holds) when the directory has them; without
    weights, the initial weights `seed` makes (server and trainer build the same ones)."""
    config = load_model_config(name)
    model = build_model(config)
    if os.path.isfile(os.path.join(name, "model.pt")):
        load_weights(model, name)
    return config, model


def setup_torch(seed):
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)


# ---- tokenizer ----------------------------------------------------------------------------------------


def encode_text(text):
    return list(text.encode("utf-8"))


def encode_chat(messages, add_generation_prompt, commands, discussion):
    """Token ids of the chat template. An assistant message whose content is exactly what a completion decodes
    to (a command's text, or "" for a bare EOS) becomes those completion ids again, so the prompt of the next
    turn extends prompt + completion of this one (the prefix property the interleaved strategy relies on)."""
    texts = {completion_text(c, discussion): [FIRST_COMMAND + i, EOS] for i, c in enumerate(commands)}
    texts[""] = [EOS]
    ids = []
    for m in messages:
        role, content = m.get("role", "user"), m.get("content") or ""
        ids += encode_text(f"<|{role}|>\n")
        ids += texts[content] if role == "assistant" and content in texts else encode_text(content)
        ids += encode_text("\n")
    if add_generation_prompt:
        ids += encode_text("<|assistant|>\n")
    return ids


def completion_text(command, discussion):
    """How a command token reads as text: MLGym's DISCUSSION line and one fenced command block."""
    return f"DISCUSSION\n{discussion}\n\n```\n{command}\n```\n"


def token_text(token_id, commands, discussion):
    if token_id == EOS:
        return ""
    if token_id >= FIRST_COMMAND:
        return completion_text(commands[token_id - FIRST_COMMAND], discussion)
    return bytes([token_id]).decode("utf-8", errors="replace")


# ---- model --------------------------------------------------------------------------------------------


class Block(nn.Module):
    """A pre-norm decoder block. Its linear layers carry the names HF decoders use (`qkv_proj` as Phi-3's fused
    projection, `o_proj`, `up_proj`, `down_proj`), so prime-rl's default LoRA `target_modules` find o_proj,
    up_proj and down_proj here as in a real model (lora.py)."""

    def __init__(self, d_model, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(d_model)
        self.qkv_proj = nn.Linear(d_model, 3 * d_model)
        self.o_proj = nn.Linear(d_model, d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.up_proj = nn.Linear(d_model, 4 * d_model)
        self.down_proj = nn.Linear(4 * d_model, d_model)

    def forward(self, x, pad_mask):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv_proj(self.norm1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, h, d // h).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // h)
        causal = torch.ones(t, t, dtype=torch.bool).triu(1)
        blocked = causal.view(1, 1, t, t) | pad_mask.view(b, 1, 1, t)
        scores = scores.masked_fill(blocked, float("-inf"))
        attn = torch.softmax(scores, dim=-1).nan_to_num(0.0)
        x = x + self.o_proj((attn @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.down_proj(torch.relu(self.up_proj(self.norm2(x))))


class TinyPolicy(nn.Module):
    """Reads the last `context_tokens` tokens and scores EOS + every command."""

    def __init__(self, config):
        super().__init__()
        self.context_tokens = config["context_tokens"]
        self.commands = list(config["commands"])
        d = config["d_model"]
        self.embed = nn.Embedding(FIRST_COMMAND + len(self.commands), d)
        self.position = nn.Embedding(self.context_tokens, d)
        self.blocks = nn.ModuleList(Block(d, config["heads"]) for _ in range(config["layers"]))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 1 + len(self.commands))

    def windows(self, prefixes):
        """Left-padded [B, context_tokens] windows of the last tokens of each prefix."""
        n = self.context_tokens
        rows = []
        for prefix in prefixes:
            tail = list(prefix[-n:])
            rows.append([PAD] * (n - len(tail)) + tail)
        return torch.tensor(rows, dtype=torch.long)

    def forward(self, windows):
        pad_mask = windows == PAD
        x = self.embed(windows) + self.position.weight.unsqueeze(0)
        for block in self.blocks:
            x = block(x, pad_mask)
        return self.head(self.norm(x[:, -1, :]))


def head_index(token_id):
    return 0 if token_id == EOS else token_id - FIRST_COMMAND + 1


def head_token(index):
    return EOS if index == 0 else FIRST_COMMAND + index - 1


def forced_eos(sequence, position):
    """True where the structural rule fixes the token: EOS right after a command token."""
    return position > 0 and sequence[position - 1] >= FIRST_COMMAND and sequence[position] == EOS


def scaled_logprobs(logits, temperature):
    """Log-softmax of logits / temperature (vLLM's processed logprobs); temperature 0 means 1 here."""
    return torch.log_softmax(logits / (temperature if temperature > 0 else 1.0), dim=-1)


def sequence_logprobs(model, sequence, positions, temperatures):
    """Logprob and entropy of sequence[p] for each p in positions; gradients flow through both."""
    vocab = FIRST_COMMAND + len(model.commands)
    bad = [t for t in sequence if not 0 <= t < vocab]
    if bad:
        raise ValueError(f"token id {bad[0]} is outside this model's vocabulary (0..{vocab - 1})")
    learned = [p for p in positions if not forced_eos(sequence, p)]
    out = {p: (torch.zeros((), dtype=torch.float64), torch.zeros((), dtype=torch.float64)) for p in positions}
    if learned:
        logits = model(model.windows([sequence[:p] for p in learned]))
        for row, p in enumerate(learned):
            token = sequence[p]
            if token != EOS and token < FIRST_COMMAND:
                raise ValueError(f"token {token} at position {p} is not an output token (EOS or command)")
            lp = scaled_logprobs(logits[row], temperatures[p])
            entropy = -(lp.exp() * lp).sum()
            out[p] = (lp[head_index(token)], entropy)
    return [out[p] for p in positions]


def build_model(config):
    setup_torch(config["seed"])
    model = TinyPolicy(config).double()
    return model


def save_weights(model, directory):
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, "model.pt.tmp")
    torch.save(model.state_dict(), tmp)
    os.replace(tmp, os.path.join(directory, "model.pt"))


def load_weights(model, directory):
    state = torch.load(os.path.join(directory, "model.pt"), map_location="cpu")
    model.load_state_dict(state)
