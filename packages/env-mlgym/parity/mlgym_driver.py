#!/usr/bin/env python3
"""Runs air's parity sequences through an MLGym checkout's own agent tools.

Usage: mlgym_driver.py <mlgym_root> <sequences.json> <out.json> [<agent_config>]
       mlgym_driver.py --prompts <mlgym_root> <out.json> [<agent_config>]

For each sequence a bash is started in a fresh workspace and prepared the way MLGym's environment and agent
prepare their container shell: a commands directory on PATH, the aliases file sourced with expand_aliases, the
environment variables reset, then the agent config's state command, env_variables and command_files (shell
files sourced, scripts made executable). Each step goes through the same path as in MLGym: the multi-line
guard (a heredoc for edit/insert bodies), the malformed-edit check, `bash -n`, the command followed by MLGym's
exit-status marker, output read and cleaned by MLGym's own `read_with_timeout`, LAST_ACTION exported, and the
`state` command read for the footer. Outcomes are written in the parity kit's format (see kit.ts).

With --prompts it writes the command docs and the system message MLGym's own parser
(mlgym/tools/parsing.py, ParseCommandDetailed) builds from the agent config, for a fixed made-up task.

Nothing of MLGym is copied here: its files are read from <mlgym_root> at run time.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path

NO_OUTPUT = "Your command ran successfully and did not produce any output."
WORKSPACE = "/WS"
SHORT_TIMEOUT = 25


def import_read_with_timeout(root: Path):
    """MLGym's output reader, imported with its docker/rich imports stubbed (it needs neither to run)."""
    for name in ["docker", "docker.errors", "docker.types", "docker.models", "docker.models.containers"]:
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["docker.models.containers"].Container = object  # type: ignore[attr-defined]
    rich = types.ModuleType("rich")
    rich_logging = types.ModuleType("rich.logging")

    class RichHandler(logging.StreamHandler):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(sys.stderr)

    rich_logging.RichHandler = RichHandler  # type: ignore[attr-defined]
    sys.modules.setdefault("rich", rich)
    sys.modules.setdefault("rich.logging", rich_logging)
    sys.path.insert(0, str(root))
    from mlgym.environment import utils  # noqa: PLC0415

    return utils


def end_names(command_files: list[Path]) -> dict[str, str]:
    """Multi-line commands and their terminators, from the `# @yaml` blocks of the command files."""
    out: dict[str, str] = {}
    for file in command_files:
        text = file.read_text()
        for block in re.finditer(r"# @yaml\n((?:#.*\n)+)(\w+)\(\)", text):
            end = re.search(r"^# end_name: (\S+)", block.group(1), re.MULTILINE)
            if end:
                out[block.group(2)] = end.group(1)
    return out


def guard(action: str, endings: dict[str, str], submit_end: str | None) -> str:
    """MLGym's multi-line guard: adds `<< '<end>'` to the first line of edit/insert blocks (same quirks)."""
    patterns = [
        re.compile(rf"^\s*({name})\s*(.*?)^({end})\s*$", re.DOTALL | re.MULTILINE) for name, end in endings.items()
    ]
    if submit_end is not None:
        patterns.append(re.compile(rf"^\s*(submit)\s*(.*?)^({submit_end})\s*$", re.DOTALL | re.MULTILINE))
    parsed = []
    rem = action
    while rem.strip():
        matches = sorted((m for m in (p.search(rem) for p in patterns) if m), key=lambda m: m.start())
        if not matches:
            parsed.append(rem)
            break
        m = matches[0]
        pre, match_action, rem = rem[: m.start()], rem[m.start() : m.end()], rem[m.end() :]
        if pre.strip():
            parsed.append(pre)
        if match_action.strip():
            eof = m.group(3).strip()
            if not match_action.split("\n")[0].strip().endswith(f"<< '{eof}'"):
                guarded = match_action[m.start() :]
                first_line = guarded.split("\n")[0]
                parsed.append(guarded.replace(first_line, first_line + f" << '{eof}'", 1))
            else:
                parsed.append(match_action)
    return "\n".join(parsed)


class Shell:
    def __init__(self, utils, workspace: Path, home: Path) -> None:
        self.utils = utils
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
        self.proc = subprocess.Popen(
            ["/bin/bash", "--noprofile", "--norc"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            cwd=workspace,
            env=env,
        )
        self.returncode = 0

    def raw(self, text: str, timeout: float = SHORT_TIMEOUT) -> str:
        u = self.utils
        suffix = f'EXITSTATUS="$?"; sleep 0.01; echo {u.PROCESS_DONE_MARKER_START}$EXITSTATUS{u.PROCESS_DONE_MARKER_END}\n'
        cmd = text if text.endswith("\n") else text + "\n"
        os.write(self.proc.stdin.fileno(), (cmd + suffix).encode())
        self.proc.stdin.flush()
        buffer, code = u.read_with_timeout(self.proc, timeout, timeout)
        self.returncode = int(code) if code.isdigit() else 999
        return buffer

    def communicate(self, text: str, timeout: float = SHORT_TIMEOUT, set_last_action: bool = False) -> str:
        check = self.raw(f"/bin/bash -n <<'EOF'\n{text}\nEOF\n")
        if self.returncode != 0:
            return check
        out = self.raw(text, timeout)
        if set_last_action:
            self.raw(f"export LAST_ACTION={shlex.quote(text.strip())}", 5)
        return out

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def run_sequence(utils, root: Path, agent: dict, sequence: dict) -> dict:
    tools = agent["tools"]
    tmp = Path(tempfile.mkdtemp(prefix="mlgym-parity-"))
    workspace = (tmp / "workspace").resolve()
    workspace.mkdir()
    commands_dir = tmp / "commands"
    for rel, content in sequence["files"].items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(content)
    shell = Shell(utils, workspace, tmp)
    try:
        shell.communicate(f"mkdir -p {commands_dir}")
        shell.communicate(f"touch {commands_dir}/__init__.py")
        shell.communicate(f"export PATH=$PATH:{commands_dir}")
        aliases = root / "dockerfiles" / "aliases.sh"
        if aliases.exists():
            shell.communicate("shopt -s expand_aliases")
            shutil.copy(aliases, commands_dir / "bash_aliases.sh")
            shell.communicate(f"source {commands_dir}/bash_aliases.sh")
        shell.communicate(
            'export CURRENT_FILE="" && export CURRENT_LINE=0 && export SEARCH_RESULTS=() && '
            "export SEARCH_FILES=() && export SEARCH_INDEX=0"
        )
        state_code = tools["state_command"]["code"]
        assignments = [f"{k}={v}" for k, v in tools.get("env_variables", {}).items()]
        shell.communicate("\n".join([state_code, *assignments]))
        files = [root / f for f in tools["command_files"]]
        for file in files:
            contents = file.read_text()
            if not contents.strip().startswith("#!"):
                shutil.copy(file, commands_dir / file.name)
                if file.name.endswith(".sh"):
                    shell.communicate(f"source {commands_dir}/{file.name}")
            else:
                target = commands_dir / file.name.rsplit(".", 1)[0]
                shutil.copy(file, target)
                target.chmod(0o755)
        endings = end_names(files)
        # MLGym builds submit's pattern from its end_name even when it has none: the text "None".
        submit_end = endings.get("submit", "None")

        normalise = lambda s: s.replace(str(workspace), WORKSPACE)  # noqa: E731
        steps = []
        for step in sequence["steps"]:
            action = guard(step, endings, submit_end).strip()
            kind = "command"
            if re.match(r"^edit\s+(\d+):(\d+)(?:\n|$|\s)", action, re.MULTILINE) and "end_of_edit" not in action:
                output = "Malformed edit command. Please ensure you use the `end_of_edit` keyword to mark the end of your edit."
            else:
                output = shell.communicate(action, SHORT_TIMEOUT, set_last_action=True)
                if re.search(r"\<\<VALIDATION\|\|(.*)\|\|VALIDATION\>\>", output, re.DOTALL):
                    kind = "validate"
                elif re.search(r"\<\<SUBMISSION\|\|(.*)\|\|SUBMISSION\>\>", output, re.DOTALL):
                    kind = "submit"
            state = json.loads(shell.communicate(tools["state_command"]["name"]))
            outcome = {"kind": kind}
            if kind == "command":
                outcome["output"] = normalise(output if output.strip() else NO_OUTPUT)
            outcome["openFile"] = normalise(state["open_file"])
            outcome["cwd"] = normalise(state["working_dir"])
            steps.append(outcome)
            if kind == "submit":
                break
        result_files = {}
        for path in sorted(p for p in workspace.rglob("*") if p.is_file()):
            result_files[str(path.relative_to(workspace))] = path.read_text()
        return {"steps": steps, "files": dict(sorted(result_files.items()))}
    finally:
        shell.close()
        shutil.rmtree(tmp, ignore_errors=True)


PROMPT_TASK = {"id": "parityTask", "name": "Parity", "description": "A made-up task.", "training_timeout": 1800}


def prompts(root: Path, agent: dict) -> dict:
    """MLGym's command docs and system message, built by its own parser (simple_parsing stubbed)."""
    for name in ["simple_parsing", "simple_parsing.helpers", "simple_parsing.helpers.serialization"]:
        sys.modules.setdefault(name, types.ModuleType(name))
    serializable = types.ModuleType("simple_parsing.helpers.serialization.serializable")

    class FrozenSerializable:
        @classmethod
        def from_dict(cls, d):
            return cls(**d)

    serializable.FrozenSerializable = FrozenSerializable  # type: ignore[attr-defined]
    sys.modules["simple_parsing.helpers.serialization.serializable"] = serializable
    sys.path.insert(0, str(root))
    from mlgym.tools.parsing import ParseCommand  # noqa: PLC0415

    tools = agent["tools"]
    parser = ParseCommand.get(tools.get("parser", "ParseCommandBash"))
    commands = []
    for file in tools["command_files"]:
        commands += [c for c in parser.parse_command_file(str(root / file)) if not c.name.startswith("_")]
    docs = parser.generate_command_docs(commands, **tools.get("env_variables", {}))
    system = agent["system_template"].format(command_docs=docs, **tools.get("env_variables", {}), **PROMPT_TASK)
    return {"commandDocs": docs, "system": system}


def main() -> None:
    import yaml

    if len(sys.argv) >= 2 and sys.argv[1] == "--prompts":
        root = Path(sys.argv[2]).resolve()
        agent_file = Path(sys.argv[4]) if len(sys.argv) == 5 else root / "configs" / "agents" / "default.yaml"
        out = prompts(root, yaml.safe_load(agent_file.read_text()))
        Path(sys.argv[3]).write_text(json.dumps(out, indent=1) + "\n")
        return
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    root = Path(sys.argv[1]).resolve()
    sequences = json.loads(Path(sys.argv[2]).read_text())
    agent_file = Path(sys.argv[4]) if len(sys.argv) == 5 else root / "configs" / "agents" / "default.yaml"
    agent = yaml.safe_load(agent_file.read_text())
    utils = import_read_with_timeout(root)
    out = {s["name"]: run_sequence(utils, root, agent, s) for s in sequences}
    Path(sys.argv[3]).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {sys.argv[3]} ({len(out)} sequences)")


if __name__ == "__main__":
    main()
