import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { diskFullHint, diskSpace } from "./disk.ts";

describe("diskFullHint", () => {
  const dir = tmpdir();

  test("a full-disk error from Bun, Python or SQLite names the run dir, the space and how to resume", () => {
    for (const error of [
      "ENOSPC: no space left on device, write",
      "trainer exited with code 1; last lines:\n  | OSError: [Errno 28] No space left on device",
      "SQLiteError: database or disk is full",
    ]) {
      const hint = diskFullHint(dir, error, "/cfg/run.toml", 4);
      expect(hint).toMatch(
        new RegExp(`^the disk under ${dir} is full \\(.* free of .*\\): free space there`),
      );
      expect(hint).toContain("`rl /cfg/run.toml --resume` continues after step 4");
    }
  });

  test("no hint for other errors while there is room; a hint when free space is under the bound", () => {
    expect(diskSpace(dir)?.free).toBeGreaterThan(1024 ** 2);
    expect(diskFullHint(dir, "trainer exited with code 1", "run.toml", 2)).toBeUndefined();
    expect(diskFullHint(dir, undefined, "run.toml", undefined, Number.MAX_SAFE_INTEGER)).toContain(
      "continues from the start",
    );
  });
});
