import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SnapshotStore, sweepIncomplete } from "./snapshot-store.ts";

const root = mkdtempSync(join(tmpdir(), "air-snapshot-store-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A complete snapshot `id` in `store`: a tree holding one file, or a 3-byte tar; `bytes` as a saver counted them. */
async function save(store: SnapshotStore, id: string, format: "tree" | "tar", bytes?: number) {
  const path = await store.place(id, format);
  if (format === "tree") {
    mkdirSync(path);
    writeFileSync(join(path, "f"), "x");
  } else writeFileSync(path, "tar");
  return store.commit({ id, format, path, cwd: "/w", ...(bytes !== undefined && { bytes }) });
}

test("a save cut short by a kill (files, no handle) is swept; complete snapshots stay; never follows a link", async () => {
  const store = new SnapshotStore(join(root, "snapshots"));
  expect(await sweepIncomplete(store)).toEqual([]);
  // complete: a tree and a tar, each with its handle
  await save(store, "s0-r0-t1", "tree");
  await save(store, "s0-r1-t0", "tar");
  // cut short: a tree and a tar without handles, a half-written handle; a link out of the store inside a torn tree
  const outside = join(root, "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "keep"), "mine");
  const torn = await store.place("s1-r2-t3", "tree");
  mkdirSync(torn);
  writeFileSync(join(torn, "big"), "y");
  symlinkSync(outside, join(torn, "out"));
  writeFileSync(await store.place("s1-r4-t0", "tar"), "half");
  writeFileSync(join(store.dir, "s1-r5-t0.json.partial"), "{");
  const removed = await sweepIncomplete(store);
  expect(removed.sort()).toEqual(["s1-r2-t3", "s1-r4-t0.tar", "s1-r5-t0.json.partial"]);
  expect(readdirSync(store.dir).sort()).toEqual([
    "s0-r0-t1",
    "s0-r0-t1.json",
    "s0-r1-t0.json",
    "s0-r1-t0.tar",
  ]);
  expect((await store.list()).map((h) => h.id)).toEqual(["s0-r0-t1", "s0-r1-t0"]);
  expect(existsSync(join(outside, "keep"))).toBe(true);
});

test("prune goes by id, reading no handle: trees and tars go, handle first; others, a half-written handle and a link stay", async () => {
  const store = new SnapshotStore(join(root, "prune"));
  expect(await store.prune(() => true)).toEqual([]);
  for (const [id, format] of [
    ["s0-r0-t1", "tree"],
    ["s0-r0-t2", "tar"],
    ["s0-r1-t1", "tree"],
  ] as const)
    expect((await save(store, id, format, format === "tree" ? 7 : undefined)).bytes).toBe(
      format === "tree" ? 7 : 3,
    );
  // handles are never read: one that no longer parses goes by its id, another rollout's stays
  writeFileSync(join(store.dir, "s0-r0-t1.json"), "{ torn");
  writeFileSync(join(store.dir, "s0-r1-t1.json"), "{ torn");
  writeFileSync(join(store.dir, "s0-r0-t3.json.partial"), "{}");
  const outside = join(root, "prune-outside");
  mkdirSync(outside);
  symlinkSync(outside, join(store.dir, "s0-r0-link"));
  expect(await store.prune((id) => id.startsWith("s0-r0-"))).toEqual(["s0-r0-t1", "s0-r0-t2"]);
  expect(readdirSync(store.dir).sort()).toEqual([
    "s0-r0-link",
    "s0-r0-t3.json.partial",
    "s0-r1-t1",
    "s0-r1-t1.json",
  ]);
  expect(existsSync(outside)).toBe(true);
});
