import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { forkSandbox } from "./fork-sandbox.ts";
import { UnsandboxedRuntime } from "./local-none.ts";
import type { Runtime } from "./types.ts";

const root = mkdtempSync(join(tmpdir(), "air-fork-sandbox-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("a runtime without fork (the unsandboxed one): the child gets the parent's files and exported variables", async () => {
  const task = join(root, "task");
  mkdirSync(join(task, "workspace"), { recursive: true });
  writeFileSync(join(task, "workspace", "a.txt"), "bundle\n");
  const runtime = new UnsandboxedRuntime({ root: join(root, "sandboxes"), python: "/usr/bin/python3" });
  expect((runtime as Runtime).fork).toBeUndefined();
  try {
    const files = { key: "fork", dir: task, readOnly: [] };
    const parent = await runtime.acquire(files, { rolloutId: "p" });
    // HOME: the runtime exports it in every new shell; the parent dropped it
    await parent.exec("echo parent > a.txt; export VENV=/opt/v AIR_X='a b'; unset -v HOME", 30_000);
    const child = await forkSandbox(runtime, parent, files, { rolloutId: "c" });
    const seen = await child.exec("cat a.txt; printenv VENV AIR_X; printenv HOME || echo unset", 30_000);
    expect(seen.output).toBe("parent\n/opt/v\na b\nunset\n");
  } finally {
    await runtime.close();
  }
});
