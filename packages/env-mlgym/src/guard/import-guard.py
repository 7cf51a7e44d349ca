# air's import guard: runs an MLGym evaluation script unchanged while the agent's workspace modules run in a
# separate, confined process. `python -c <this> [--trusted a.py,b.py] [--hidden c.py] [--call-timeout-s N]
# -- evaluate.py [args]`. When the evaluation imports a workspace module that is neither trusted (evaluation
# scripts, pristine files) nor hidden (secret files), it gets a proxy module: its functions are calls over a
# pipe to the agent process, whose stdout, stderr and exit status never reach this process's output. Values
# cross as marshal data (None, bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset; numpy
# scalars become Python numbers); anything else, a call past the timeout or the agent process ending is an
# evaluation error: a message on stderr and exit status 86, never a score.
import ctypes
import importlib.machinery
import importlib.util
import marshal
import os
import select
import subprocess
import sys
import threading
import types

GUARD_EXIT = 86
MAX_MESSAGE = 64 << 20
FAST = {type(None), bool, int, float, str}

PLAIN_SOURCE = r'''
PLAIN = {type(None), bool, int, float, complex, str, bytes}

def plain(value, depth=0):
    """`value` as exact builtin types (marshal writes any buffer, a numpy scalar or array, as bytes: never let
    it); numpy scalars become Python numbers; anything else raises ValueError naming its type."""
    if depth > 100:
        raise ValueError("data nested too deeply")
    t = type(value)
    if t in PLAIN:
        return value
    if t is list or t is tuple or t is set or t is frozenset:
        return t(plain(v, depth + 1) for v in value)
    if t is dict:
        return {plain(k, depth + 1): plain(v, depth + 1) for k, v in value.items()}
    if t.__module__ == "numpy" and getattr(value, "ndim", None) == 0 and callable(getattr(value, "item", None)):
        return plain(value.item(), depth + 1)
    for base in (bool, int, float, complex, str, bytes, list, tuple, set, frozenset, dict):
        if isinstance(value, base):
            return plain(base(value), depth + 1)
    raise ValueError(f"a {t.__module__}.{t.__qualname__}")

def dumps(message):
    """marshal bytes of `message` as exact builtin types: the fast path when marshal reads back what it was given
    (a numpy scalar or any buffer comes back as bytes and differs: then `plain` converts or refuses it)."""
    import marshal
    try:
        data = marshal.dumps(message)
        if marshal.loads(data) == message:
            return data
    except ValueError:
        pass
    return marshal.dumps(plain(message))
'''
exec(PLAIN_SOURCE)

HOST = PLAIN_SOURCE + r'''
import ctypes, marshal, os, sys, traceback, types
MAX_MESSAGE = 64 << 20
FAST = {type(None), bool, int, float, str}
rfd, wfd = int(sys.argv[1]), int(sys.argv[2])

buffer = bytearray()

def read_exact(n):
    global buffer
    while len(buffer) < n:
        b = os.read(rfd, max(n - len(buffer), 1 << 16))
        if not b:
            os._exit(0)
        buffer += b
    data = bytes(buffer[:n])
    del buffer[:n]
    return data

def recv():
    n = int.from_bytes(read_exact(4), "little")
    return marshal.loads(read_exact(n))

def send(message):
    data = dumps(message)
    data = len(data).to_bytes(4, "little") + data
    while data:
        data = data[os.write(wfd, data):]

def landlock(read_roots):
    """Confines this process with Landlock: no writes anywhere, reads only under read_roots, no TCP, no
    signals to or abstract sockets of processes outside it. Returns the ABI, 0 when unavailable."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        return 0
    fs = (1 << 13) - 1
    if abi >= 2:
        fs |= 1 << 13
    if abi >= 3:
        fs |= 1 << 14
    if abi >= 5:
        fs |= 1 << 15
    net = 3 if abi >= 4 else 0
    scoped = 3 if abi >= 6 else 0
    attr = (ctypes.c_uint64 * 3)(fs, net, scoped)
    size = 24 if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = libc.syscall(444, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return 0
    read = 1 | (1 << 2) | (1 << 3)  # EXECUTE | READ_FILE | READ_DIR
    for root in read_roots:
        try:
            fd = os.open(root, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        rule = (ctypes.c_char * 12)()
        ctypes.memmove(rule, ctypes.byref(ctypes.c_uint64(read)), 8)
        ctypes.memmove(ctypes.byref(rule, 8), ctypes.byref(ctypes.c_int32(fd)), 4)
        libc.syscall(445, ruleset, 1, ctypes.byref(rule), ctypes.c_uint32(0))
        os.close(fd)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    ok = libc.syscall(446, ruleset, ctypes.c_uint32(0)) == 0
    os.close(ruleset)
    return abi if ok else 0

class Finder:
    def __init__(self, sources):
        self.sources = sources
    def find_spec(self, name, path=None, target=None):
        if path is None and name in self.sources:
            import importlib.util
            return importlib.util.spec_from_loader(name, self, origin=self.sources[name][0])
        return None
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        filename, source = self.sources[module.__name__]
        module.__file__ = filename
        exec(compile(source, filename, "exec"), module.__dict__)

def crossing(value):
    return plain(value)

def describe(module):
    exports = {}
    for name, value in vars(module).items():
        if name.startswith("__"):
            continue
        if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
            exports[name] = ("call", None)
        else:
            try:
                exports[name] = ("data", crossing(value))
            except ValueError as error:
                exports[name] = ("opaque", str(error))
    return exports

def error_reply(error):
    return ("raise", type(error).__name__, str(error)[:4000], traceback.format_exc()[-4000:])

def main():
    config = recv()
    landlock(config["read_roots"])
    sys.meta_path.insert(0, Finder(config["sources"]))
    sys.argv = [config["argv0"]]
    modules = {}
    while True:
        message = recv()
        if message[0] == "import":
            try:
                module = __import__(message[1])
                modules[message[1]] = module
                send(("exports", describe(module)))
            except BaseException as error:
                send(error_reply(error))
        elif message[0] == "call":
            _, module, name, args, kwargs = message
            try:
                result = getattr(modules[module], name)(*args, **kwargs)
            except BaseException as error:
                send(error_reply(error))
                continue
            try:
                send(("ok", result))
            except ValueError as error:
                send(("uncrossable", f"{module}.{name} returned {error}, which cannot cross to the evaluation"))

try:
    main()
finally:
    os._exit(0)
'''


def fail(message):
    """Ends the evaluation: no score can come out of this process after this."""
    try:
        os.write(2, f"air import guard: {message}\nEvaluation error: no score.\n".encode())
    finally:
        stop_host()
        os._exit(GUARD_EXIT)


def checked(value, depth=0):
    """`value` when it holds only plain data (a reply is the agent's: marshal may build code objects)."""
    if depth > 100:
        raise ValueError("nested too deeply")
    if type(value) in PLAIN:
        return value
    if type(value) in (list, tuple, set, frozenset):
        for v in value:
            checked(v, depth + 1)
        return value
    if type(value) is dict:
        for k, v in value.items():
            checked(k, depth + 1)
            checked(v, depth + 1)
        return value
    raise ValueError(f"a {type(value).__name__}")


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
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-c", HOST, str(to_host), str(from_host)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
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
        self.buffer = bytearray()
        self.poll = select.poll()
        self.poll.register(self.rfd, select.POLLIN)
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

    def read_exact(self, n, what):
        while len(self.buffer) < n:
            if not self.poll.poll(self.timeout * 1000):
                fail(f"{what} did not return within {self.timeout:g} s")
            b = os.read(self.rfd, max(n - len(self.buffer), 1 << 16))
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
            self.send(message)
            n = int.from_bytes(self.read_exact(4, what), "little")
            if n > MAX_MESSAGE:
                fail(f"{what} sent a reply of {n} bytes (at most {MAX_MESSAGE})")
            try:
                reply = marshal.loads(self.read_exact(n, what))
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
    script, script_args = args[1], args[2:]
    workspace = os.path.dirname(os.path.abspath(script))
    names = lambda option: {n[:-3] for n in options[option].split(",") if n.endswith(".py") and "/" not in n}
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
    runpy.run_path(script, run_name="__main__")


main()
