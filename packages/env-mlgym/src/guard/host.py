# The agent's process of air's import guard (its source is HOST_SOURCE in import-guard.py, set by guard.ts):
# imports the agent's workspace modules from memory and answers the evaluation's calls over a pipe.
import ctypes
import marshal
import os
import sys
import types

MAX_MESSAGE = 64 << 20
FAST = {type(None), bool, int, float, str}
rfd, wfd = int(sys.argv[1]), int(sys.argv[2])

buffer = bytearray()


def recv():
    """The next message: one read per message in the usual case (length prefix and body arrive together)."""
    global buffer
    while True:
        if len(buffer) >= 4:
            n = int.from_bytes(buffer[:4], "little")
            if n > MAX_MESSAGE:
                os._exit(0)
            if len(buffer) >= 4 + n:
                data = bytes(buffer[4 : 4 + n])
                del buffer[: 4 + n]
                return marshal.loads(data)
        b = os.read(rfd, 1 << 16)
        if not b:
            os._exit(0)
        buffer += b


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
    return ("raise", type(error).__name__, str(error)[:4000], format_without_guard(error)[-4000:])


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
