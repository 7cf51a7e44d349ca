"""The router prime-rl's `inference` starts in front of its engine (vllm-router: `--port server.port
--worker-urls http://<host>:<backend_port>`), reduced to what a client of one engine sees: it forwards the
OpenAI-compatible and health routes to the engine and answers 404 for everything else — the admin routes
(/pause, /resume, /update_weights, LoRA loading) are the engine's, reached on backend_port, as prime-rl's
orchestrator reaches them."""

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

FORWARDED = {
    ("GET", "/health"),
    ("GET", "/v1/models"),
    ("POST", "/v1/chat/completions"),
    ("POST", "/v1/completions"),
    ("POST", "/tokenize"),
    ("POST", "/detokenize"),
}


def make_handler(engine_host, engine_port):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def forward(self, method):
            path = urlparse(self.path).path
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            if (method, path) not in FORWARDED:
                data = b'{"error": {"message": "router: no route ' + f"{method} {path}".encode() + b'", "code": 404}}'
                return self.reply(404, "application/json", data)
            conn = http.client.HTTPConnection(engine_host, engine_port, timeout=600)
            try:
                headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
                conn.request(method, self.path, body=body, headers=headers)
                res = conn.getresponse()
                self.reply(res.status, res.getheader("Content-Type", "application/json"), res.read())
            except OSError as e:
                self.reply(502, "application/json", f'{{"error": {{"message": "router: engine unreachable: {e}"}}}}'.encode())
            finally:
                conn.close()

        def reply(self, status, content_type, data):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.forward("GET")

        def do_POST(self):
            self.forward("POST")

    return Handler


class Router(ThreadingHTTPServer):
    request_queue_size = 4096  # as the engine's (inference.py)


def start_router(host, port, engine_port):
    """Serves on (host, port) in a daemon thread; returns the server."""
    engine_host = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
    server = Router((host, port), make_handler(engine_host, engine_port))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    return server
