import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { snapshotTree } from "./snapshot-tree.ts";

const root = mkdtempSync(join(tmpdir(), "air-snapshot-tree-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("an unchanged file is a hard link to the last snapshot's copy; a changed one (even with its old size and time) is copied; the old snapshot stays as it was", async () => {
  const ws = join(root, "ws");
  mkdirSync(join(ws, "sub"), { recursive: true });
  mkdirSync(join(ws, "data"));
  writeFileSync(join(ws, "model.bin"), "m".repeat(1000));
  writeFileSync(join(ws, "sub", "notes.txt"), "one");
  writeFileSync(join(ws, "data", "shared.csv"), "skip me");
  const owner = process.getuid?.() ?? 0;
  const first = join(root, "t0");
  mkdirSync(first);
  const m0 = await snapshotTree(ws, first, owner, new Set(["data"]));

  // same size, its modification time put back: only the change time tells
  const { atime, mtime } = statSync(join(ws, "sub", "notes.txt"));
  writeFileSync(join(ws, "sub", "notes.txt"), "two");
  utimesSync(join(ws, "sub", "notes.txt"), atime, mtime);
  const second = join(root, "t1");
  mkdirSync(second);
  await snapshotTree(ws, second, owner, new Set(["data"]), m0);

  expect(statSync(join(second, "model.bin")).ino).toBe(statSync(join(first, "model.bin")).ino);
  expect(statSync(join(second, "sub", "notes.txt")).ino).not.toBe(
    statSync(join(first, "sub", "notes.txt")).ino,
  );
  expect(readFileSync(join(second, "sub", "notes.txt"), "utf8")).toBe("two");
  expect(readFileSync(join(first, "sub", "notes.txt"), "utf8")).toBe("one");
  expect(() => statSync(join(second, "data"))).toThrow();
});
