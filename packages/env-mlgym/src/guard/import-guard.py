# air's import guard, evaluation side: `python -c <guard.ts IMPORT_GUARD> [--trusted a.py,b.py] [--hidden c.py]
# [--call-timeout-s N] -- evaluate.py [args]` runs the evaluation script unchanged; a workspace module that is
# neither trusted (evaluation scripts, pristine files) nor hidden (secrets) is imported as a proxy whose calls
# cross a pipe to the agent's process (host.py). Anything that cannot cross, a call past the timeout or the
# agent's process ending ends the evaluation: a message on stderr, exit status 86, never a score.
import ctypes
import importlib.machinery
import importlib.util
import marshal
import os
import subprocess
import sys
import threading
import time

GUARD_EXIT = 86
MAX_MESSAGE = 64 << 20
FAST = {type(None), bool, int, float, str}

# guard.ts defines PLAIN_SOURCE (plain.py: `plain`, `dumps`, `checked`) and HOST_SOURCE (host.py) before this text.
exec(PLAIN_SOURCE)
HOST = PLAIN_SOURCE + HOST_SOURCE


def fail(message):
    """Ends the evaluation: no score can come out of this process after this."""
    try:
        os.write(2, f"air import guard: {message}\nEvaluation error: no score.\n".encode())
    finally:
        stop_host()
        os._exit(GUARD_EXIT)


class Host:
    """The agent's process: started at the first proxied import, one per evaluation."""

    def __init__(self, workspace, hidden, timeout):
        self.timeout = timeout
        self.lock = threading.Lock()
        to_host, self.wfd = os.pipe()
        self.rfd, from_host = os.pipe()
        confine = {}
        if os.geteuid() == 0:
            import pwd

            try:
                nobody = pwd.getpwnam("nobody")
                confine = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
            except KeyError:
                fail("the evaluation runs as root and there is no user 'nobody' to run the agent's module as")
        # What the agent's module writes (stdout and stderr, unbuffered: `-u`) goes to a pipe this process drains;
        # it is only ever shown when the evaluation fails, never read for a score.
        self.output = bytearray()
        self.output_bytes = 0
        output_r, output_w = os.pipe()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-u", "-c", HOST, str(to_host), str(from_host)],
                stdin=subprocess.DEVNULL,
                stdout=output_w,
                stderr=output_w,
                pass_fds=(to_host, from_host),
                cwd="/",
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent", "LANG": "C.UTF-8"},
                start_new_session=True,
                **confine,
            )
        except OSError as error:
            fail(f"cannot start the process for the agent's module ({error})")
        os.close(to_host)
        os.close(from_host)
        os.close(output_w)
        self.drain = threading.Thread(target=self.read_output, args=(output_r,), name="air-guard-output", daemon=True)
        self.drain.start()
        self.buffer = bytearray()
        # A call waits in a blocking read (one system call, no poll per call); this watchdog ends the
        # evaluation when one call (its write and its reads) has taken longer than the timeout.
        self.waiting = None
        threading.Thread(target=self.watchdog, name="air-guard-watchdog", daemon=True).start()
        sources = {}
        for entry in sorted(os.listdir(workspace)):
            path = os.path.join(workspace, entry)
            if entry.endswith(".py") and entry[:-3] not in hidden and os.path.isfile(path) and not os.path.islink(path):
                with open(path, encoding="utf-8", errors="replace") as f:
                    sources[entry[:-3]] = (path, f.read())
        roots = {sys.prefix, sys.exec_prefix, sys.base_prefix, "/usr", "/lib", "/lib64", "/bin", "/etc", "/proc", "/sys", "/dev"}
        roots.update(p for p in sys.path if p and os.path.isabs(p) and not p.startswith(workspace))
        self.send({"sources": sources, "read_roots": sorted(roots), "argv0": os.path.join(workspace, "strategy.py")})

    def send(self, message):
        try:
            data = dumps(message)
        except ValueError as error:
            fail(f"{describe_args(message)}() was called with {error}, which cannot cross to the agent's module")
        data = len(data).to_bytes(4, "little") + data
        try:
            while data:
                data = data[os.write(self.wfd, data):]
        except OSError:
            self.ended()

    def read_output(self, fd):
        while True:
            try:
                b = os.read(fd, 1 << 16)
            except OSError:
                b = b""
            if not b:
                os.close(fd)
                return
            self.output_bytes += len(b)
            self.output += b[: max(0, MAX_AGENT_OUTPUT - len(self.output))]

    def watchdog(self):
        period = min(1.0, self.timeout / 4)
        while True:
            time.sleep(period)
            waiting = self.waiting
            if waiting is not None and time.monotonic() - waiting[0] > self.timeout:
                fail(f"{waiting[1]} did not return within {self.timeout:g} s")

    def read_exact(self, n, what):
        while len(self.buffer) < n:
            try:
                b = os.read(self.rfd, 1 << 16)
            except OSError:
                b = b""
            if not b:
                self.ended()
            self.buffer += b
        data = bytes(self.buffer[:n])
        del self.buffer[:n]
        return data

    def ended(self):
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        fail(f"the agent's module process ended (exit status {code}); its own output and exit never count")

    def ask(self, message, what):
        with self.lock:
            self.waiting = (time.monotonic(), what)
            self.send(message)
            n = int.from_bytes(self.read_exact(4, what), "little")
            if n > MAX_MESSAGE:
                fail(f"{what} sent a reply of {n} bytes (at most {MAX_MESSAGE})")
            data = self.read_exact(n, what)
            self.waiting = None
            try:
                reply = marshal.loads(data)
                if type(reply) is not tuple or not reply or not isinstance(reply[0], str):
                    raise ValueError("not a reply")
                return reply if reply[0] == "ok" and type(reply[-1]) in FAST else checked(reply)
            except (ValueError, EOFError, TypeError) as error:
                fail(f"{what} sent something that is not plain data ({error})")


def describe_args(message):
    return f"{message[1]}.{message[2]}" if isinstance(message, tuple) and len(message) > 2 else "setup"


HOST_PROCESS = []


def stop_host():
    for host in HOST_PROCESS:
        try:
            os.killpg(host.process.pid, 9)
        except OSError:
            pass


def raise_from(reply, where):
    _, kind, message, trace = reply
    if not (type(kind) is str and type(message) is str and type(trace) is str):
        fail(f"{where}: malformed error reply")
    import builtins

    error_type = getattr(builtins, kind, None)
    if not (isinstance(error_type, type) and issubclass(error_type, Exception)) or error_type is SystemExit:
        error_type = RuntimeError
    # The message is the agent's text: one line, no braces, so an evaluator that prints it cannot print a
    # metrics JSON line; the host's traceback goes to stderr, which is never read for scores.
    os.write(2, f"air: traceback of {where} in the agent's process:\n{trace}\n".encode(errors="replace"))
    clean = " ".join(message.split()).translate(str.maketrans("{}", "()"))[:500]
    text = f"{clean} (raised in {where}, run by air in a separate process)"
    try:
        error = error_type(text)
    except Exception:
        error = RuntimeError(f"{kind}: {text}")
    raise error


class Source:
    """Loads a trusted workspace module (evaluation script, pristine file, secret) from its source, never from
    a __pycache__ the agent may have planted."""

    def __init__(self, path):
        self.path = path

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        with open(self.path, "rb") as f:
            code = compile(f.read(), self.path, "exec", dont_inherit=True)
        module.__file__ = self.path
        exec(code, module.__dict__)


class Finder:
    """Imports of workspace modules: trusted and hidden ones from their source, the agent's as proxies; an
    agent module that shadows a real one (json.py, numpy/) is not imported at all: the real one is."""

    def __init__(self, workspace, agent, local, timeout):
        self.workspace, self.agent, self.local, self.timeout = workspace, agent, local, timeout

    def host(self):
        if not HOST_PROCESS:
            HOST_PROCESS.append(Host(self.workspace, self.local["hidden"], self.timeout))
        return HOST_PROCESS[0]

    def find_spec(self, name, path=None, target=None):
        if path is not None:
            return None
        file = os.path.join(self.workspace, f"{name}.py")
        if name in self.local["trusted"] or name in self.local["hidden"]:
            return importlib.util.spec_from_loader(name, Source(file), origin=file) if os.path.isfile(file) else None
        if name not in self.agent:
            return None
        if name in sys.builtin_module_names or importlib.machinery.PathFinder.find_spec(name, sys.path):
            return None
        return importlib.util.spec_from_loader(name, self, origin=file)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        host = self.host()
        reply = host.ask(("import", name), f"importing {name}.py")
        if reply[0] == "raise":
            raise_from(reply, f"{name}.py")
        if reply[0] != "exports" or type(reply[1]) is not dict:
            fail(f"importing {name}.py: unexpected reply {reply[0]!r}")
        module.__file__ = os.path.join(self.workspace, f"{name}.py")
        opaque = {}
        for attr, export in reply[1].items():
            if type(attr) is not str or type(export) is not tuple or len(export) != 2:
                fail(f"importing {name}.py: malformed exports")
            kind, value = export
            if kind == "call":
                setattr(module, attr, proxy(host, name, attr))
            elif kind == "data":
                setattr(module, attr, value)
            else:
                opaque[attr] = value

        def missing(attr):
            if attr in opaque:
                fail(
                    f"the evaluation uses {name}.{attr}, which is {opaque[attr]}: only functions and plain values "
                    "cross the boundary between the evaluation and the agent's code (this task cannot be proxied)"
                )
            raise AttributeError(f"module {name!r} has no attribute {attr!r}")

        module.__getattr__ = missing


def proxy(host, module, name):
    where = f"{module}.{name}"

    def call(*args, **kwargs):
        reply = host.ask(("call", module, name, args, kwargs), f"{where}()")
        if reply[0] == "ok" and len(reply) == 2:
            return reply[1]
        if reply[0] == "raise" and len(reply) == 4:
            raise_from(reply, f"{where}()")
        if reply[0] == "uncrossable":
            fail(str(reply[1]))
        fail(f"{where}(): unexpected reply {reply[0]!r}")

    call.__name__ = call.__qualname__ = name
    call.__module__ = module
    return call


def main():
    args = sys.argv[1:]
    options = {"--trusted": "", "--hidden": "", "--call-timeout-s": "60"}
    while args and args[0] != "--":
        options[args[0]] = args[1]
        args = args[2:]
    # Absolute, as MLGym runs it (python /home/agent/workspace/evaluate.py): sys.argv[0] and tracebacks say so.
    script, script_args = os.path.abspath(args[1]), args[2:]
    workspace = os.path.dirname(script)

    def names(option):
        return {n[:-3] for n in options[option].split(",") if n.endswith(".py") and "/" not in n}

    local = {"trusted": names("--trusted") | {os.path.basename(script)[:-3]}, "hidden": names("--hidden")}
    entries = os.listdir(workspace)
    agent = {e[:-3] for e in entries if e.endswith(".py")} - local["trusted"] - local["hidden"]
    # Nothing else of the workspace is importable here (packages, .so, .pyc the agent made): it leaves sys.path.
    sys.path[:] = [p for p in sys.path if p not in ("", ".") and os.path.abspath(p) != workspace]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: the agent's process cannot ptrace or open /proc/<this>/fd
    sys.meta_path.insert(0, Finder(workspace, agent, local, float(options["--call-timeout-s"])))
    sys.argv = [script, *script_args]
    import atexit
    import runpy

    atexit.register(stop_host)

    def excepthook(kind, error, trace):
        # The traceback Python prints, without this guard's frames: the agent sees the evaluation's as in MLGym.
        error.__traceback__ = trace
        os.write(2, format_without_guard(error).encode(errors="replace"))
        report_agent_output()

    sys.excepthook = excepthook
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as end:
        if report_agent_output() and end.code in (None, 0):
            end_for_agent_output()
        raise
    if report_agent_output():
        end_for_agent_output()


main()
