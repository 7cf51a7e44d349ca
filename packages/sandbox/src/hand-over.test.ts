import { afterAll, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { handOver } from "./local.ts";

const root = mkdtempSync(join(tmpdir(), "air-hand-over-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const asRoot = process.getuid?.() === 0;

test.skipIf(!asRoot)(
  "handOver: the copy becomes the agent's, read-only paths root's and unwritable, links are never followed",
  async () => {
    const outside = join(root, "outside.txt");
    writeFileSync(outside, "host file");
    chownSync(outside, 1234, 1234);
    const ws = join(root, "workspace");
    mkdirSync(join(ws, "data", "sub"), { recursive: true });
    writeFileSync(join(ws, "mine.txt"), "x");
    chmodSync(join(ws, "mine.txt"), 0o600);
    writeFileSync(join(ws, "data", "sub", "train.csv"), "a,b");
    writeFileSync(join(ws, "evaluate.py"), "print(1)");
    chmodSync(join(ws, "evaluate.py"), 0o755);
    symlinkSync(outside, join(ws, "link"));
    symlinkSync(outside, join(ws, "data", "link"));
    await handOver(ws, 4242, ["data", "evaluate.py", "missing"]);
    expect(statSync(join(ws, "mine.txt"))).toMatchObject({ uid: 4242, gid: 4242 });
    expect(statSync(join(ws, "mine.txt")).mode & 0o777).toBe(0o600);
    expect(lstatSync(join(ws, "link")).uid).toBe(4242);
    for (const p of ["data", "data/sub", "data/sub/train.csv", "evaluate.py"]) {
      expect(statSync(join(ws, p)).uid).toBe(0);
      expect(statSync(join(ws, p)).mode & 0o222).toBe(0);
    }
    expect(statSync(join(ws, "data", "sub")).mode & 0o777).toBe(0o555);
    expect(statSync(join(ws, "data", "sub", "train.csv")).mode & 0o777).toBe(0o444);
    expect(statSync(join(ws, "evaluate.py")).mode & 0o777).toBe(0o555);
    // the links' target outside the workspace is untouched
    expect(statSync(outside)).toMatchObject({ uid: 1234 });
    expect(statSync(outside).mode & 0o200).toBe(0o200);
  },
);
