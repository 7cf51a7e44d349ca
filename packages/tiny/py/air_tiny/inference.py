"""CPU stand-in for prime-rl's `inference` entrypoint, started the same way: `<command> @ inference.toml`.

It reads the inference TOML air writes for prime-rl (0.8 and 0.9 layouts, settings.py): the tiny model directory
(`[vllm] model` / `[model] name`), `server.host` / `server.port`, the seed, and `router`. As prime-rl does, with
a router (its default) the engine listens on `backend_port` (server.port + 100 unless set) and a router on
server.port forwards the OpenAI routes (router.py); admin routes (/pause, /resume, /update_weights, LoRA
loading) exist only on the engine. `router = "None"` puts the engine itself on server.port.
Engine routes: GET /health, GET /liveness, GET /v1/models, POST /tokenize, POST /v1/chat/completions, POST /pause,
POST /resume, POST /update_weights {"weight_dir"}, POST /v1/load_lora_adapter (vLLM) and /load_lora_adapter
(prime-rl's in-place wrapper; SGLang's name) {"lora_name", "lora_path"} and their unload routes: a PEFT adapter
dir (lora.py) served as its own model name (base + B·A·alpha/r), the base model unchanged. As stock `vllm serve` (vllm_serve.py, bin/vllm):
none of prime-rl's routes, runtime LoRA only with VLLM_ALLOW_RUNTIME_LORA_UPDATING. As SGLang
(sglang_serve.py, bin/sglang): its routes, adapters selected only as "<served model>:<adapter>" or `lora_path`.
SIGTERM or SIGINT stops it at once (exit 0), even with requests in flight.
"""

import hashlib
import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

import torch

from . import cli
from . import model as tm
from .adapters import Adapters, NotFound
from .chat import chat_response
from . import sglang_serve, vllm_serve
from .router import start_router
from .settings import inference_settings

PAUSE_WAIT_S = 600


class PolicyState:
    def __init__(self, config, settings, model=None):
        self.config = {**config, "model_name": settings["served_model_name"] or settings["model"]}
        self.config["max_model_len"] = settings["max_model_len"] or config["max_position_embeddings"]
        self.sampler_seed = settings["seed"]
        config = self.config
        self.model = model if model is not None else tm.build_model(config)
        self.model.eval()
        self.prompt_counts = {}
        self.lock = threading.Lock()
        self.running = threading.Event()
        self.running.set()
        self.version = 0
        self.weight_dir = None
        self.model_names = {config["model_name"]}
        self.served_names = {config["model_name"]}
        self.adapters = Adapters(settings.get("enable_lora", False), settings.get("max_lora_rank", 16))
        self.flavor = "prime-rl"

    def prompt_ids(self, body):
        if "messages" in body:
            config = self.config
            generation_prompt = body.get("add_generation_prompt", True)
            return tm.encode_chat(body["messages"], generation_prompt, config["commands"], config["discussion"])
        return tm.encode_text(body.get("prompt", ""))

    def generate(self, body, adapter=None):
        if not self.running.wait(PAUSE_WAIT_S):
            raise TimeoutError("server paused for too long")
        prompt = self.prompt_ids(body)
        temperature = float(body.get("temperature", 1.0) if body.get("temperature") is not None else 1.0)
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens") or 2
        with self.lock, torch.no_grad():
            model = self.adapters.model(adapter)
            model = self.model if model is None else model  # no adapter named: the base
            generator = torch.Generator().manual_seed(self.request_seed(prompt, body.get("seed")))
            logits = model(model.windows([prompt]))[0]
            logprobs = tm.scaled_logprobs(logits, temperature)
            if temperature > 0:
                index = int(torch.multinomial(logprobs.exp(), 1, generator=generator).item())
            else:
                index = int(torch.argmax(logprobs).item())
            tokens = [tm.head_token(index)]
            values = [float(logprobs[index].item())]
            ranked = sorted(((tm.head_token(i), float(v)) for i, v in enumerate(logprobs.tolist())), key=lambda x: -x[1])
            version = self.version
        alternatives = [ranked]
        if tokens[0] != tm.EOS and max_tokens >= 2:
            tokens.append(tm.EOS)
            values.append(0.0)
            alternatives.append([(tm.EOS, 0.0)])
        finish = "stop" if tokens[-1] == tm.EOS else "length"
        return prompt, tokens, values, alternatives, finish, version

    def request_seed(self, prompt, seed):
        """The request's seed, or else one from (config seed, weights version, prompt, how many times this
        prompt was asked under these weights): the same requests give the same completions in any order."""
        if seed is not None:
            return int(seed) & 0x7FFF_FFFF_FFFF_FFFF
        key = bytes(prompt) if all(t < 256 for t in prompt) else repr(prompt).encode()
        count = self.prompt_counts.get(key, 0)
        self.prompt_counts[key] = count + 1
        digest = hashlib.blake2b(key, digest_size=8, key=f"{self.sampler_seed}:{self.version}:{count}".encode())
        return int.from_bytes(digest.digest(), "little") & 0x7FFF_FFFF_FFFF_FFFF

    def update_weights(self, weight_dir):
        with self.lock:
            tm.load_weights(self.model, weight_dir)
            self.adapters.rebase(self.model)
            self.version += 1
            self.weight_dir = weight_dir
            self.prompt_counts = {}

    def load_lora(self, name, path, inplace):
        with self.lock:
            self.adapters.load(name, path, self.model, inplace)
            print(f"Loaded new LoRA adapter: name '{name}', path '{path}'", file=sys.stderr, flush=True)  # vLLM's line
            self.model_names.add(name)
            self.version += 1
            self.prompt_counts = {}

    def unload_lora(self, name):
        with self.lock:
            self.adapters.unload(name)
            self.model_names.discard(name)


def make_handler(state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def send_json(self, status, payload):
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def error(self, status, message):
            kind = "NotFoundError" if status == 404 else "BadRequestError"
            self.send_json(status, {"error": {"message": message, "type": kind, "param": None, "code": status}})

        def read_json(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            return json.loads(raw) if raw else {}

        def do_GET(self):
            path = urlparse(self.path).path
            if not self.route_exists("GET", path):
                return self.error(404, "Not Found")
            if path in ("/health", "/ping"):
                self.send_json(200, {})
            elif path == "/liveness":
                self.send_json(200, {"status": "ok"})
            elif path == "/v1/models":
                owner = "sglang" if state.flavor == "sglang" else "tiny"
                names = state.served_names if state.flavor == "sglang" else state.model_names
                data = [
                    {"id": name, "object": "model", "owned_by": owner, "max_model_len": state.config["max_model_len"]}
                    for name in sorted(names)
                ]
                self.send_json(200, {"object": "list", "data": data})
            elif path == "/is_paused":
                self.send_json(200, {"is_paused": not state.running.is_set()})
            elif path == "/get_model_info":
                self.send_json(200, {"model_path": state.config["model_name"], "is_generation": True})
            else:
                self.error(404, f"no route GET {path}")

        def route_exists(self, method, path):
            if state.flavor == "sglang":
                return sglang_serve.route_exists(method, path)
            if state.flavor == "vllm":
                return vllm_serve.route_exists(method, path)
            return path not in ("/get_model_info", "/is_paused")

        def do_POST(self):
            path = urlparse(self.path).path
            try:
                body = self.read_json()  # first, also for a route that does not exist: keep-alive needs it read
            except (ValueError, UnicodeDecodeError) as e:
                return self.error(400, f"invalid JSON body: {e}")
            if not self.route_exists("POST", path):
                return self.error(404, "Not Found")
            try:
                if path == "/v1/chat/completions":
                    if not isinstance(body.get("messages"), list):
                        return self.error(400, "messages must be a list")
                    if body.get("n", 1) != 1:
                        return self.error(400, "tiny supports n = 1 only")
                    if state.flavor == "sglang":
                        try:
                            adapter = sglang_serve.select_adapter(state, body)
                        except sglang_serve.Refused as e:
                            return self.send_json(e.status, sglang_serve.error_body(e.status, str(e), e.kind))
                        return self.send_json(200, chat_response(state, body, adapter, sglang=True))
                    if body.get("model") and body["model"] not in state.model_names:  # vLLM's check, same words
                        return self.error(404, f"The model `{body['model']}` does not exist.")
                    self.send_json(200, chat_response(state, body, body.get("model")))
                elif state.flavor == "sglang" and path in sglang_serve.POST_ROUTES:
                    self.send_json(*sglang_serve.admin(state, path, body))
                elif state.flavor == "vllm" and path in vllm_serve.RLHF_ROUTES:
                    self.send_json(*vllm_serve.rlhf(state, path, body))
                elif path == "/tokenize":
                    tokens = state.prompt_ids(body)
                    self.send_json(
                        200,
                        {"count": len(tokens), "max_model_len": state.config["max_model_len"], "tokens": tokens, "token_strs": None},
                    )
                elif path == "/pause":
                    state.running.clear()
                    self.send_json(200, {"status": "paused"})
                elif path == "/resume":
                    state.running.set()
                    self.send_json(200, {"status": "resumed"})
                elif path == "/update_weights":
                    if not body.get("weight_dir"):
                        return self.error(400, "weight_dir is required")
                    state.update_weights(body["weight_dir"])
                    self.send_json(200, {"status": "ok", "version": state.version})
                elif path in ("/v1/load_lora_adapter", "/load_lora_adapter"):
                    if not body.get("lora_name") or not body.get("lora_path"):
                        return self.error(400, "lora_name and lora_path are required")
                    # prime-rl's /load_lora_adapter reloads its one name in place (load_inplace = True)
                    inplace = bool(body.get("load_inplace")) or (path == "/load_lora_adapter" and state.flavor == "prime-rl")
                    try:
                        state.load_lora(body["lora_name"], body["lora_path"], inplace)
                    except NotFound as e:
                        return self.error(404, str(e))
                    self.send_json(200, {"status": "ok", "version": state.version})
                elif path in ("/v1/unload_lora_adapter", "/unload_lora_adapter"):
                    try:
                        state.unload_lora(body.get("lora_name"))
                    except NotFound as e:
                        return self.error(404, str(e))
                    self.send_json(200, {"status": "ok"})
                else:
                    self.error(404, f"no route POST {path}")
            except (FileNotFoundError, RuntimeError, ValueError, KeyError, TypeError, TimeoutError) as e:
                self.error(400, f"{type(e).__name__}: {e}")

    return Handler


class Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: a policy opening hundreds of connections at once (max_concurrent
    # rollouts 1024) got "connection refused" by the hundred; vLLM's server takes them.
    request_queue_size = 4096


def main(argv=None):
    serve(inference_settings(cli.load(sys.argv[1:] if argv is None else argv)))


def serve(settings, flavor="prime-rl"):
    """Serve until SIGTERM/SIGINT. flavor "prime-rl": prime-rl's server (its admin routes, /liveness, both LoRA
    routes); "vllm": stock `vllm serve` (vllm_serve.py), which has none of prime-rl's routes and serves the runtime
    LoRA routes only with VLLM_ALLOW_RUNTIME_LORA_UPDATING set, as vLLM registers them; "sglang": SGLang's server
    (sglang_serve.py: its routes, adapters selected only as `<served model>:<adapter>` or `lora_path`)."""
    config, model = tm.load_pretrained(settings["model"])
    state = PolicyState(config, settings, model)
    state.flavor = flavor
    for name, path in settings.get("lora_modules", {}).items():
        try:
            state.load_lora(name, path, inplace=False)
        except (NotFound, ValueError) as e:
            raise SystemExit(f"--lora-modules {name}={path}: {e}")
    server = Server((settings["host"], settings["engine_port"]), make_handler(state))
    server.daemon_threads = True
    engine_port = server.server_address[1]
    router = start_router(settings["host"], settings["port"], engine_port) if settings["router"] else None

    def stop(_signum, _frame):
        # Exit at once: the server holds nothing worth saving, and a normal interpreter exit while request threads
        # run torch either aborts ("terminate called without an active exception", SIGABRT) or takes seconds under
        # load, long enough for the launcher's grace period to run out.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    host, port = server.server_address[:2]
    ready = {"event": "listening", "host": host, "port": router.server_address[1] if router else port}
    print(json.dumps({**ready, "engine_port": port, "router": router is not None}), flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()


if __name__ == "__main__":
    sys.exit(main())
