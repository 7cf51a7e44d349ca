/**
 * Test helper process for the local runtime's user-namespace mode (air not running as root): acquires a
 * sandbox, runs a few commands, one evaluation, a fork and a stored snapshot, prints the results as one JSON line.
 * Usage (as an unprivileged user): bun userns-probe.ts <scratch dir owned by that user>
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LocalRuntime } from "../local.ts";
import { SnapshotStore } from "../snapshot-store.ts";

const dir = process.argv[2] as string;
mkdirSync(join(dir, "task", "workspace", "data"), { recursive: true });
mkdirSync(join(dir, "task", "evaluation"), { recursive: true });
writeFileSync(join(dir, "task", "workspace", "data", "x.csv"), "a\n1\n");
writeFileSync(
  join(dir, "task", "evaluation", "evaluate.py"),
  "import json, os\nprint(json.dumps({'files': sorted(os.listdir('.')), 'cwd': os.getcwd()}))\n",
);
const runtime = new LocalRuntime({ root: join(dir, "sandboxes"), python: "/usr/bin/python3" });
try {
  const box = await runtime.acquire(
    { key: "probe", dir: join(dir, "task"), readOnly: ["data"] },
    { rolloutId: "p" },
  );
  const out: Record<string, unknown> = {};
  for (const [name, command] of Object.entries({
    id: "id -un; pwd",
    readOnly: "{ echo x > data/x.csv; } 2>&1 | grep -c 'Read-only'",
    write: "echo hi > mine.txt && cat mine.txt",
    net: "wc -l < /proc/net/route",
    procs: "ps -e --no-headers | wc -l",
  }))
    out[name] = (await box.exec(command, 10_000)).output;
  out.evaluation = (await box.evaluate({ command: "python evaluate.py", timeoutMs: 30_000 })).stdout;
  // a fork without root: a tar inside a bwrap as the agent, the read-only data mounted, not copied
  const files = { key: "probe", dir: join(dir, "task"), readOnly: ["data"] };
  const fork = await (runtime.fork as NonNullable<typeof runtime.fork>)(box, files, { rolloutId: "f" });
  out.fork = (await fork.exec("cat mine.txt; cat data/x.csv; ls", 10_000)).output;
  // a stored snapshot without root: the sandbox frozen (its bwrap's descendants, never this process), /tmp carried
  await box.exec("echo t > /tmp/t && chmod 640 /tmp/t", 10_000);
  const handle = await runtime.saveSnapshot(box, new SnapshotStore(join(dir, "snapshots")), "s");
  const restored = await runtime.acquire(files, { rolloutId: "s", restore: handle });
  out.restored = (await restored.exec("cat /tmp/t mine.txt; stat -c '%a %U' /tmp/t", 10_000)).output;
  await runtime.release(restored);
  await runtime.release(fork);
  await runtime.release(box);
  console.log(JSON.stringify(out));
} finally {
  await runtime.close();
}
