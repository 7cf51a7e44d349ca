import { afterAll, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readTar, type TarEntry } from "./docker-tar.ts";
import { IncompleteDeltaError, storeDelta } from "./snapshot-delta.ts";

const root = mkdtempSync(join(tmpdir(), "air-snapshot-delta-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** One ustar member (what a hostile container could put in its delta), read back by the product's reader. */
interface Member {
  name: string;
  type: "0" | "1" | "2" | "5";
  data?: string;
  link?: string;
  mode?: number;
}

function tar(members: Member[]): TarEntry[] {
  const blocks: Buffer[] = [];
  for (const m of members) {
    const header = Buffer.alloc(512);
    const data = Buffer.from(m.data ?? "");
    header.write(m.name, 0, 100);
    header.write(`${(m.mode ?? 0o644).toString(8).padStart(7, "0")}\0`, 100);
    header.write("0000000\0", 108);
    header.write("0000000\0", 116);
    header.write(`${data.length.toString(8).padStart(11, "0")}\0`, 124);
    header.write(`${(1_700_000_000).toString(8).padStart(11, "0")}\0`, 136);
    header.write(m.type, 156);
    header.write(m.link ?? "", 157, 100);
    header.write("ustar\x0000", 257);
    header.fill(" ", 148, 156);
    let sum = 0;
    for (const b of header) sum += b;
    header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return readTar(new Uint8Array(Buffer.concat(blocks)));
}

const list = (records: Array<[string, string]>) =>
  new Uint8Array(Buffer.from(records.map(([key, path]) => `${key}\t${path}\0`).join("")));

function fresh(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  return dir;
}

test("a hostile delta writes nothing outside the tree and nothing through its own symlinks", async () => {
  const outside = fresh("outside");
  const to = fresh("hostile");
  // a full snapshot whose list names a file under the symlink that is not in the delta: left out
  await storeDelta(
    list([
      ["f1:1:1", "ok.txt"],
      ["f2:1:1", "l/through-list.txt"],
    ]),
    tar([
      { name: "./", type: "5", mode: 0o755 },
      { name: "./ok.txt", type: "0", data: "ok", mode: 0o4755 },
      { name: "../escape.txt", type: "0", data: "x" },
      { name: `${outside}/abs.txt`, type: "0", data: "x" },
      { name: "./l", type: "2", link: outside },
      { name: "./l/through.txt", type: "0", data: "x" },
      { name: "./l", type: "5" },
      { name: "./hard", type: "1", link: `${outside}/../x` },
      { name: "./ok.txt", type: "0", data: "again" },
    ]),
    to,
  );
  expect(readFileSync(join(to, "ok.txt"), "utf8")).toBe("ok");
  expect(statSync(join(to, "ok.txt")).mode & 0o7777).toBe(0o755);
  expect(lstatSync(join(to, "l")).isSymbolicLink()).toBe(true);
  expect(existsSync(join(root, "escape.txt"))).toBe(false);
  expect(existsSync(join(outside, "abs.txt"))).toBe(false);
  expect(existsSync(join(outside, "through.txt"))).toBe(false);
  expect(existsSync(join(outside, "through-list.txt"))).toBe(false);
  expect(existsSync(join(to, "hard"))).toBe(false);
});

test("unchanged files and symlinks are hard links to the previous tree's copy; a copy replaced there, a key that differs, or a path through a symlink is refused", async () => {
  const first = fresh("t0");
  const m0 = await storeDelta(
    list([
      ["f1:10:5", "big.bin"],
      ["f2:10:1", "sub/small"],
      ["l4:10:7", "ln"],
    ]),
    tar([
      { name: "./", type: "5" },
      { name: "./big.bin", type: "0", data: "model" },
      { name: "./sub/", type: "5" },
      { name: "./sub/small", type: "0", data: "s" },
      { name: "./ln", type: "2", link: "big.bin" },
    ]),
    first,
  );
  const second = fresh("t1");
  await storeDelta(
    list([
      ["f1:10:5", "big.bin"],
      ["f3:11:1", "sub/small"],
      ["l4:10:7", "ln"],
    ]),
    tar([
      { name: "./", type: "5" },
      { name: "./sub/", type: "5" },
      { name: "./sub/small", type: "0", data: "t" },
    ]),
    second,
    m0,
  );
  expect(statSync(join(second, "big.bin")).ino).toBe(statSync(join(first, "big.bin")).ino);
  expect(lstatSync(join(second, "ln")).isSymbolicLink()).toBe(true);
  expect(lstatSync(join(second, "ln")).ino).toBe(lstatSync(join(first, "ln")).ino);
  expect(readFileSync(join(second, "sub/small"), "utf8")).toBe("t");
  expect(readFileSync(join(first, "sub/small"), "utf8")).toBe("s");

  // not sent and not unchanged: the caller must take a full snapshot
  const third = fresh("t2");
  const changed = storeDelta(list([["f1:12:5", "big.bin"]]), tar([{ name: "./", type: "5" }]), third, m0);
  await expect(changed).rejects.toBeInstanceOf(IncompleteDeltaError);
  // an unchanged file under a directory that is now a symlink out of the tree: refused, never linked through it
  const outside = fresh("outside-2");
  const swapped = storeDelta(
    list([["f2:10:1", "sub/small"]]),
    tar([
      { name: "./", type: "5" },
      { name: "./sub", type: "2", link: outside },
    ]),
    fresh("t2b"),
    m0,
  );
  await expect(swapped).rejects.toBeInstanceOf(IncompleteDeltaError);
  expect(existsSync(join(outside, "small"))).toBe(false);
  // the previous copy pruned and another file put at its path
  rmSync(join(first, "big.bin"));
  await Bun.write(join(first, "big.bin"), "other");
  const fourth = fresh("t3");
  const replaced = storeDelta(list([["f1:10:5", "big.bin"]]), tar([{ name: "./", type: "5" }]), fourth, m0);
  await expect(replaced).rejects.toBeInstanceOf(IncompleteDeltaError);
});
