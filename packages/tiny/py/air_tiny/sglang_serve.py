"""CPU stand-in for SGLang's server, `python -m sglang.launch_server --model-path <model> [flags]`, started as
`packages/tiny/bin/sglang --model-path <model> [flags]` (the launcher has no SGLang kind: you start it, as a user
starts SGLang, and point `[policy] base_url` at it). Flags read: --model-path, --host, --port, --served-model-name,
--random-seed, --context-length, --enable-lora, --max-lora-rank, --lora-paths name=path ...; others are accepted
and have no effect on CPU.

As strict as SGLang (openai/serving_base.py and http_server.py; commits in packages/policy-openai/README.md):
- a generation selects a LoRA adapter only from `model: "<served model>:<adapter>"` (split at the first colon,
  both parts trimmed, an empty adapter is none) or else the request's `lora_path` field; a `model` whose part
  before the colon is not the served model name is a 404 `{"error": {"message": "Model 'x' is not served.",
  "type": "NotFound", ...}}` — so a bare adapter name is refused, never silently served by the base;
- an adapter requested without --enable-lora, or not loaded, is a 400;
- routes: /health, /v1/models (`owned_by: "sglang"`), /get_model_info, /v1/chat/completions (ids in
  `choices[0].prompt_token_ids` / `token_ids` when `return_prompt_token_ids` / `return_token_ids`),
  /load_lora_adapter and /unload_lora_adapter at the root (`{success, error_message, loaded_adapters}`, 400 on
  failure), /update_weights_from_disk `{model_path}` -> `{success, message}`; none of vLLM's or prime-rl's admin
  routes (/pause, /resume, /update_weights, /v1/load_lora_adapter, /tokenize).
"""

import sys

from .adapters import NotFound
from .flags import read_flags

GET_ROUTES = {"/health", "/health_generate", "/v1/models", "/get_model_info"}
POST_ROUTES = {
    "/v1/chat/completions",
    "/load_lora_adapter",
    "/unload_lora_adapter",
    "/update_weights_from_disk",
}


def route_exists(method, path):
    return path in (GET_ROUTES if method == "GET" else POST_ROUTES)


def parse_model_parameter(model):
    """SGLang's `_parse_model_parameter`: "base:adapter" -> (base, adapter); no colon or an empty adapter -> None."""
    if ":" not in model:
        return model, None
    base, adapter = model.split(":", 1)
    return base.strip(), adapter.strip() or None


class Refused(Exception):
    def __init__(self, status, message, kind):
        super().__init__(message)
        self.status, self.kind = status, kind


def select_adapter(state, body):
    """The adapter a chat request names, as SGLang resolves it (`_resolve_lora_path`: the model's adapter, else
    `lora_path`), or None for the base. Raises Refused with SGLang's status and error type."""
    model = body.get("model")
    adapter = None
    if model:
        base, adapter = parse_model_parameter(str(model))
        if base not in state.served_names:
            raise Refused(404, f"Model {str(model)!r} is not served.", "NotFound")
    adapter = adapter or body.get("lora_path")
    if adapter is None:
        return None
    if not state.adapters.enabled:
        raise Refused(
            400,
            f"LoRA adapter '{adapter}' was requested, but LoRA is not enabled. Please launch the server with "
            "--enable-lora flag and preload adapters using --lora-paths or /load_lora_adapter endpoint.",
            "BadRequest",
        )
    if state.adapters.model(adapter) is None:
        raise Refused(400, f"The following requested LoRA adapters are not loaded: {adapter}", "BadRequest")
    return adapter


def admin(state, path, body):
    """SGLang's admin routes as (status, answer): `{success, ...}`, 400 when not successful."""
    try:
        if path == "/update_weights_from_disk":
            state.update_weights(body["model_path"])
            return 200, {"success": True, "message": "Succeeded to update model weights."}
        if path == "/load_lora_adapter":
            state.load_lora(body["lora_name"], body["lora_path"], inplace=False)
        else:
            state.unload_lora(body.get("lora_name"))
    except (NotFound, FileNotFoundError, RuntimeError, ValueError, KeyError, TypeError) as e:
        key = "message" if path == "/update_weights_from_disk" else "error_message"
        return 400, {"success": False, key: f"{type(e).__name__}: {e}"}
    loaded = {name: a["path"] for name, a in state.adapters.loaded.items()}
    return 200, {"success": True, "error_message": None, "loaded_adapters": loaded}


def error_body(status, message, kind):
    return {"error": {"object": "error", "message": message, "type": kind, "param": None, "code": status}}


def parse(argv):
    flags = read_flags(argv, 0, "sglang.launch_server")
    one = lambda key, default=None: (flags.get(key) or [default])[0]  # noqa: E731
    model = one("model-path")
    if not model:
        raise SystemExit("sglang.launch_server: --model-path is required")
    modules = {}
    for entry in flags.get("lora-paths", []):
        name, sep, path = entry.partition("=")
        modules[name if sep else entry] = path if sep else entry
    max_len = one("context-length")
    port = int(one("port", 30000))
    return {
        "model": model,
        "host": one("host", "127.0.0.1"),
        "port": port,
        "router": False,
        "engine_port": port,
        "seed": int(one("random-seed", 0)),
        "max_model_len": int(max_len) if max_len else None,
        "served_model_name": one("served-model-name"),
        "enable_lora": "enable-lora" in flags or bool(modules),
        "max_lora_rank": int(one("max-lora-rank", 16)),
        "lora_modules": modules,
    }


def main(argv=None):
    from .inference import serve

    serve(parse(sys.argv[1:] if argv is None else argv), flavor="sglang")


if __name__ == "__main__":
    sys.exit(main())
