"""Lists the TOML keys a prime-rl config class accepts, read from its source with `ast` (no imports needed).

Usage: config_fields.py <dir holding prime_rl/configs/*.py> <ClassName>  → JSON list of dotted keys on stdout.
Nested config classes (also through unions, Optional, Annotated and TypeAlias) give `parent.child` keys; a dict
field gives `name.*` (free-form). Inherited fields are included. make-golden.sh runs it at the pinned commits.
"""

import ast
import json
import os
import sys


def load_classes(config_dir):
    """Classes and aliases per module, with what each module imports from the other config modules (several
    modules define a class of the same name, e.g. ModelConfig)."""
    modules = {}
    for name in sorted(os.listdir(config_dir)):
        if not name.endswith(".py"):
            continue
        mod = name[:-3]
        classes, aliases, imports = {}, {}, {}
        tree = ast.parse(open(os.path.join(config_dir, name)).read())
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("prime_rl.configs."):
                for a in node.names:
                    imports[a.asname or a.name] = (node.module.split(".")[-1], a.name)
            elif isinstance(node, ast.ClassDef):
                fields = {}
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        if not item.target.id.startswith("_"):
                            fields[item.target.id] = item.annotation
                bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
                classes[node.name] = (bases, fields)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                aliases[node.target.id] = node.value
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                aliases[node.targets[0].id] = node.value
        modules[mod] = {"classes": classes, "aliases": aliases, "imports": imports}
    return modules


def resolve(modules, mod, name, kind):
    """(module, name) where `name` as seen from module `mod` is defined, or None."""
    m = modules[mod]
    if name in m[kind]:
        return mod, name
    if name in m["imports"]:
        other, orig = m["imports"][name]
        if other in modules:
            return resolve(modules, other, orig, kind)
    return None


def names_in(modules, mod, node, seen=None):
    """(module, class) pairs an annotation refers to, through aliases and string annotations."""
    seen = seen if seen is not None else set()
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            try:
                out += names_in(modules, mod, ast.parse(sub.value, mode="eval").body, seen)
            except SyntaxError:
                pass
        elif isinstance(sub, ast.Name):
            alias = resolve(modules, mod, sub.id, "aliases")
            if alias and alias not in seen:
                seen.add(alias)
                out += names_in(modules, alias[0], modules[alias[0]]["aliases"][alias[1]], seen)
            cls = resolve(modules, mod, sub.id, "classes")
            if cls:
                out.append(cls)
            elif sub.id in ("dict", "Dict", "EnvVars"):
                out.append(("", "dict"))
    return out


def fields_of(modules, ref):
    mod, cls = ref
    bases, fields = modules[mod]["classes"][cls]
    out = {}
    for base in bases:
        b = resolve(modules, mod, base, "classes")
        if b:
            out.update(fields_of(modules, b))
    for name, annotation in fields.items():
        out[name] = (mod, annotation)
    return out


def keys(modules, ref, prefix="", stack=()):
    out = set()
    for field, (mod, annotation) in fields_of(modules, ref).items():
        key = prefix + field
        out.add(key)
        for sub in names_in(modules, mod, annotation):
            if sub == ("", "dict"):
                out.add(key + ".*")
            elif sub not in stack:
                out |= keys(modules, sub, key + ".", stack + (sub,))
    return out


def main():
    modules = load_classes(os.path.join(sys.argv[1], "prime_rl", "configs"))
    roots = [(mod, sys.argv[2]) for mod in modules if sys.argv[2] in modules[mod]["classes"]]
    if len(roots) != 1:
        raise SystemExit(f"{sys.argv[2]} is defined in {len(roots)} config modules")
    print(json.dumps(sorted(keys(modules, roots[0], stack=(roots[0],))), indent=0))


if __name__ == "__main__":
    main()
