import { afterAll, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { copyTree, freeze, thaw } from "./fork-copy.ts";
import { runProcess } from "./process.ts";

const root = mkdtempSync(join(tmpdir(), "air-fork-copy-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const asRoot = process.getuid?.() === 0;

test.skipIf(!asRoot)(
  "copyTree: the copy is the new agent's, modes and times kept, links copied as links, setuid and FIFOs dropped, skipped paths left out",
  async () => {
    const outside = join(root, "outside.txt");
    writeFileSync(outside, "host file");
    chownSync(outside, 1234, 1234);
    const from = join(root, "from");
    mkdirSync(join(from, "sub"), { recursive: true });
    mkdirSync(join(from, "data"));
    writeFileSync(join(from, "data", "big.csv"), "a,b");
    writeFileSync(join(from, "mine.txt"), "x");
    chmodSync(join(from, "mine.txt"), 0o600);
    writeFileSync(join(from, "sub", "run.sh"), "echo");
    chmodSync(join(from, "sub", "run.sh"), 0o4755);
    symlinkSync(outside, join(from, "link"));
    await runProcess(["mkfifo", join(from, "pipe")], { cwd: "/", timeoutMs: 10_000 });
    const to = join(root, "to");
    mkdirSync(to);
    await copyTree(from, to, 4242, new Set(["data"]));
    expect(readFileSync(join(to, "mine.txt"), "utf8")).toBe("x");
    expect(statSync(join(to, "mine.txt"))).toMatchObject({ uid: 4242, gid: 4242 });
    expect(statSync(join(to, "mine.txt")).mode & 0o777).toBe(0o600);
    expect(Math.floor(statSync(join(to, "mine.txt")).mtimeMs)).toBe(
      Math.floor(statSync(join(from, "mine.txt")).mtimeMs),
    );
    expect(statSync(join(to, "sub")).uid).toBe(4242);
    expect(statSync(join(to, "sub", "run.sh")).mode & 0o7777).toBe(0o755);
    expect(lstatSync(join(to, "link")).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(to, "link")).uid).toBe(4242);
    expect(readlinkSync(join(to, "link"))).toBe(outside);
    expect(lstatSync(join(to, "pipe"), { throwIfNoEntry: false })).toBeUndefined();
    expect(lstatSync(join(to, "data"), { throwIfNoEntry: false })).toBeUndefined();
    // the link's target outside the tree is untouched
    expect(statSync(outside)).toMatchObject({ uid: 1234 });
  },
);

/** How long spawned processes may take to start and sleep, or to stop and continue, on a busy machine. */
const SETTLE_MS = 60_000;

/** Polls `read` until it returns `want` (compared as JSON) or SETTLE_MS pass; returns the last value read. */
async function settles<T>(read: () => Promise<T>, want: T): Promise<T> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const value = await read();
    if (JSON.stringify(value) === JSON.stringify(want) || Date.now() > deadline) return value;
    await Bun.sleep(50);
  }
}

/** The first letter of `ps`'s STAT of every process of `uid`. */
const statesOf = async (uid: number) =>
  (await runProcess(["ps", "-u", String(uid), "-o", "stat="], { cwd: "/", timeoutMs: 10_000 })).stdout
    .split("\n")
    .filter(Boolean)
    .map((s) => s[0]);

test.skipIf(!asRoot)("freeze stops every process of a uid (children too) until thaw", async () => {
  const uid = 64_321;
  const child = spawn(
    "setpriv",
    [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "sh", "-c", "sleep 60 & sleep 60"],
    {
      detached: true,
      stdio: "ignore",
    },
  );
  try {
    const state = () => statesOf(uid);
    // sh and its two sleeps, started and asleep
    expect(await settles(state, ["S", "S", "S"])).toEqual(["S", "S", "S"]);
    const stopped = await freeze(uid);
    expect(stopped.length).toBe(3);
    expect(await state()).toEqual(["T", "T", "T"]);
    thaw(stopped);
    expect(await settles(state, ["S", "S", "S"])).toEqual(["S", "S", "S"]);
  } finally {
    if (child.pid) process.kill(-child.pid, "SIGKILL");
  }
});

test.skipIf(!asRoot)(
  "freeze with a root pid stops that tree's processes of the uid, nothing else",
  async () => {
    const uid = 64_322;
    const tree = spawn(
      "setpriv",
      [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "sh", "-c", "sleep 61 & sleep 61"],
      {
        detached: true,
        stdio: "ignore",
      },
    );
    const other = spawn("setpriv", [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "sleep", "61"], {
      detached: true,
      stdio: "ignore",
    });
    let stopped: number[] = [];
    try {
      // the tree's sh and two sleeps and the other sleep, started and asleep
      expect(await settles(() => statesOf(uid), ["S", "S", "S", "S"])).toEqual(["S", "S", "S", "S"]);
      const stat = async (pid: number) =>
        (
          await runProcess(["ps", "-o", "stat=", "-p", String(pid)], { cwd: "/", timeoutMs: 10_000 })
        ).stdout.trim()[0];
      stopped = await freeze(uid, tree.pid);
      // sh's two sleeps (setpriv exec'ed sh, the root pid, which is not stopped; without a PID namespace an orphan
      // would go to the host's init, so the tree here has none)
      expect(stopped.length).toBe(2);
      for (const pid of stopped) expect(await stat(pid)).toBe("T");
      expect(await stat(other.pid as number)).toBe("S");
      thaw(stopped);
      for (const pid of stopped) expect(await settles(() => stat(pid), "S")).toBe("S");
    } finally {
      for (const child of [tree, other]) if (child.pid) process.kill(-child.pid, "SIGKILL");
    }
  },
);
