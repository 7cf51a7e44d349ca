/**
 * Test helper process: acquires one local sandbox, starts two background sleeps in it (one in its own
 * session), prints "ready" and waits forever. The test SIGKILLs this process and checks the sleeps died too.
 * Usage: bun sandbox-holder.ts <scratch dir> <sleep seconds, a unique marker>
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LocalRuntime } from "../local.ts";

const [dir, marker] = process.argv.slice(2) as [string, string];
mkdirSync(join(dir, "task", "workspace"), { recursive: true });
mkdirSync(join(dir, "task", "evaluation"), { recursive: true });
writeFileSync(join(dir, "task", "workspace", "a.txt"), "a\n");
const runtime = new LocalRuntime({
  root: join(dir, "sandboxes"),
  python: "/usr/bin/python3",
  stageNext: false,
});
const box = await runtime.acquire(
  { key: "holder", dir: join(dir, "task"), readOnly: [] },
  { rolloutId: "holder" },
);
await box.exec(`(setsid sleep ${marker} &) ; (sleep ${marker} &)`, 10_000);
console.log("ready");
await new Promise(() => {});
