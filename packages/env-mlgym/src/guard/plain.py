# Shared by both sides of air's import guard (prepended to it and to the agent's process by guard.ts):
# values cross the pipe as exact builtin types.
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


def without_guard(trace):
    """`trace` without the frames of air's import guard (its `python -c` source, runpy's, and importlib's around
    its loaders, which Python drops for a plain import): what remains is the evaluation's code and the agent's,
    the frames a traceback shows in MLGym."""
    import types

    kept = []
    while trace is not None:
        name = trace.tb_frame.f_code.co_filename
        if not (name == "<string>" or name.startswith(("<frozen runpy", "<frozen importlib._bootstrap")) or name.endswith("/runpy.py")):
            kept.append(trace)
        trace = trace.tb_next
    out = None
    for t in reversed(kept):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def format_without_guard(error):
    """The traceback Python prints for `error` (its causes and contexts too), each without the guard's frames."""
    import traceback

    seen, todo = set(), [error]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        e.__traceback__ = without_guard(e.__traceback__)
        todo += [e.__cause__, e.__context__]
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))
