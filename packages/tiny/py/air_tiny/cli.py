"""prime-rl's command line, as its entrypoints read it: `@ file.toml` (or `@file.toml`) loads a TOML, then
`--a.b value` / `--a.b=value` overrides one key (a bare `--a.b` is true). A value is read as a TOML literal when
it parses as one (numbers, booleans, lists), else as a string. The string "None" is None, as prime-rl's own
TOML writer spells it (e.g. `router = "None"`).
"""

import tomllib


def literal(text):
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def set_key(doc, dotted, value):
    node = doc
    parts = dotted.split(".")
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}  # e.g. `--router.type vllm-router` over `router = "None"`
        node = node[part]
    node[parts[-1]] = value


def load(argv):
    doc = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "@" or arg.startswith("@"):
            path = arg[1:] or (argv[i + 1] if i + 1 < len(argv) else None)
            if not path:
                raise SystemExit("@ needs a TOML file")
            with open(path, "rb") as f:
                doc.update(tomllib.load(f))
            i += 1 if arg != "@" else 2
        elif arg.startswith("--"):
            key = arg[2:]
            if "=" in key:
                key, value = key.split("=", 1)
                set_key(doc, key, literal(value))
                i += 1
            elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                set_key(doc, key, literal(argv[i + 1]))
                i += 2
            else:
                set_key(doc, key, True)
                i += 1
        else:
            raise SystemExit(f"unexpected argument {arg!r} (usage: @ file.toml [--key.sub value ...])")
    return doc


def get(doc, dotted, default=None):
    """doc["a"]["b"] for "a.b"; default when a part is missing or None."""
    node = doc
    for part in dotted.split("."):
        if not isinstance(node, dict) or node.get(part) in (None, "None"):
            return default
        node = node[part]
    return node


def present(doc, dotted):
    """True when the key is set and not None ("None")."""
    return get(doc, dotted, _MISSING) is not _MISSING


_MISSING = object()
