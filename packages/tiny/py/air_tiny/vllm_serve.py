"""CPU stand-in for stock vLLM's `vllm serve <model> [flags]` (the launcher's `[inference] kind = "vllm"` branch),
started by the same argv with `command = ["<path>/packages/tiny/bin/vllm"]`. It reads the flags the launcher
writes (vllmServeArgv: --host, --port, --seed, --max-model-len, --served-model-name, --enable-lora,
--lora-modules name=path ...) and serves what stock vLLM serves: the OpenAI routes, /tokenize, /health, and the
runtime LoRA routes only with VLLM_ALLOW_RUNTIME_LORA_UPDATING set; not prime-rl's /pause, /resume,
/update_weights or /liveness. Other vLLM flags (GPU memory, tensor parallelism, dtype, logprobs mode: the
stand-in's logprobs are always processed_logprobs) are read and have no effect on CPU.
"""

import sys

from .flags import read_flags
from .inference import serve


def parse(argv):
    if not argv or argv[0] != "serve":
        raise SystemExit("usage: vllm serve <model> [--flag value ...] (the stand-in implements `serve` only)")
    if len(argv) < 2 or argv[1].startswith("--"):
        raise SystemExit("vllm serve: the model is required")
    flags = read_flags(argv, 2, "vllm serve")
    one = lambda key, default=None: (flags.get(key) or [default])[0]  # noqa: E731
    modules = {}
    for entry in flags.get("lora-modules", []):
        name, sep, path = entry.partition("=")
        if not sep:
            raise SystemExit(f"vllm serve: --lora-modules takes name=path, got {entry!r}")
        modules[name] = path
    max_len = one("max-model-len")
    return {
        "model": argv[1],
        "host": one("host", "0.0.0.0"),
        "port": int(one("port", 8000)),
        "router": False,
        "engine_port": int(one("port", 8000)),
        "seed": int(one("seed", 0)),
        "max_model_len": int(max_len) if max_len else None,
        "served_model_name": one("served-model-name"),
        "enable_lora": "enable-lora" in flags,
        "max_lora_rank": int(one("max-lora-rank", 16)),
        "lora_modules": modules,
    }


def main(argv=None):
    serve(parse(sys.argv[1:] if argv is None else argv), flavor="vllm")


if __name__ == "__main__":
    sys.exit(main())
