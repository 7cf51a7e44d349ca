# air's import guard, what the agent's module wrote (joined before import-guard.py by guard.ts): the agent's
# process writes its stdout and stderr to a pipe the guard drains (Host.read_output); after the evaluation the guard
# reports it on stderr, one base64 line that evaluation.ts shows and never parses for a score.
import os
import sys

# The evaluation ran, but the agent's module wrote to its stdout or stderr: as in MLGym, where those writes land in
# the evaluator's output and its metrics do not decode, there is no score (the writes are shown, never parsed).
AGENT_OUTPUT_EXIT = 88
AGENT_OUTPUT_PREFIX = "air-agent-output: "
# Kept whole and last on stderr, within what a runtime keeps of it (docker: its last 4000 bytes).
MAX_AGENT_OUTPUT = 2 << 10


REPORTED = []


def report_agent_output():
    """Stops the agent's process and, once, writes what it wrote to stderr as one line (base64): whether it wrote."""
    if not REPORTED:
        stop_host()
        text = b""
        for host in HOST_PROCESS:
            host.drain.join(timeout=2)
            text = bytes(host.output)
            if host.output_bytes > len(text):
                text += f"\n[... {host.output_bytes - len(text)} more bytes]".encode()
        if text:
            import base64

            os.write(2, (AGENT_OUTPUT_PREFIX + base64.b64encode(text).decode() + "\n").encode())
        REPORTED.append(bool(text))
    return REPORTED[0]


def end_for_agent_output():
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(AGENT_OUTPUT_EXIT)
