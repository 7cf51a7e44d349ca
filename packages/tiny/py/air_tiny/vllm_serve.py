"""CPU stand-in for stock vLLM's `vllm serve <model> [flags]` (the launcher's `[inference] kind = "vllm"` branch),
started by the same argv with `command = ["<path>/packages/tiny/bin/vllm"]`. It reads the flags the launcher
writes (vllmServeArgv: --host, --port, --seed, --max-model-len, --served-model-name, --enable-lora,
--lora-modules name=path ...) and serves what stock vLLM serves: the OpenAI routes, /tokenize, /health, and the
runtime LoRA routes only with VLLM_ALLOW_RUNTIME_LORA_UPDATING set; not prime-rl's routes (/liveness, its
/update_weights {"weight_dir"}): with VLLM_SERVER_DEV_MODE, vLLM's own /pause, /resume, /is_paused and
/update_weights, which wants {"update_info"} and answers prime-rl's payload 400. Other vLLM flags (GPU memory, tensor parallelism, dtype, logprobs mode: the
stand-in's logprobs are always processed_logprobs) are read and have no effect on CPU.
"""

import sys

import os

from .flags import read_flags

# vLLM's own weight-transfer routes (vllm/entrypoints/serve/rlhf/api_router.py at 1ace43ed7b3c79daba3b4828fdaf30dcb4094adb):
# mounted only with VLLM_SERVER_DEV_MODE; /update_weights wants {"update_info"}, not prime-rl's {"weight_dir"}.
RLHF_ROUTES = ("/pause", "/resume", "/update_weights")


def env_on(name):
    return os.environ.get(name, "").lower() in ("1", "true")


def route_exists(method, path):
    """The routes stock `vllm serve` mounts: no /liveness and none of prime-rl's (/load_lora_adapter ...); runtime
    LoRA only with VLLM_ALLOW_RUNTIME_LORA_UPDATING; its own /pause, /resume, /is_paused, /update_weights only with
    VLLM_SERVER_DEV_MODE."""
    if path in RLHF_ROUTES or path == "/is_paused":
        return env_on("VLLM_SERVER_DEV_MODE")
    if method == "GET":
        return path not in ("/liveness", "/get_model_info")
    if path in ("/load_lora_adapter", "/unload_lora_adapter"):
        return False
    if path in ("/v1/load_lora_adapter", "/v1/unload_lora_adapter"):
        return env_on("VLLM_ALLOW_RUNTIME_LORA_UPDATING")
    return True


def rlhf(state, path, body):
    """vLLM's /pause (-> {"status": "paused"}), /resume, and /update_weights as (status, answer). /update_weights
    without `update_info` is vLLM's HTTPException 400 "Missing 'update_info' in request body", in vLLM's error body
    (exception_handling/handlers/http.py at 0f17ee061e413bf8ab7927f926f69cdff24dc63e); with it, vLLM hands it to
    the weight transfer engine, which the stand-in does not have (500)."""
    if path == "/pause":
        state.running.clear()
        return 200, {"status": "paused"}
    if path == "/resume":
        state.running.set()
        return 200, {"status": "resumed"}
    if body.get("update_info") is None:
        message = "Missing 'update_info' in request body"
        return 400, {"error": {"message": message, "type": "Bad Request", "param": None, "code": 400}}
    message = "the CPU stand-in has no weight transfer engine (vLLM: /init_weight_transfer_engine first)"
    return 500, {"error": {"message": message, "type": "Internal Server Error", "param": None, "code": 500}}


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
    from .inference import serve

    serve(parse(sys.argv[1:] if argv is None else argv), flavor="vllm")


if __name__ == "__main__":
    sys.exit(main())
