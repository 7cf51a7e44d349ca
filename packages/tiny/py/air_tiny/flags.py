"""The flag syntax of the servers the stand-ins replace (vLLM's and SGLang's argparse: `--key value ...`, `--key=value`)."""


def read_flags(argv, start, program):
    """`--key value ...` / `--key=value` flags from argv[start:] as {key with dashes: [values]}."""
    flags, i = {}, start
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("--"):
            raise SystemExit(f"{program}: unexpected argument {arg!r}")
        key, _, inline = arg[2:].partition("=")
        values = [inline] if inline else []
        i += 1
        while i < len(argv) and not argv[i].startswith("--"):
            values.append(argv[i])
            i += 1
        flags[key.replace("_", "-")] = values
    return flags
