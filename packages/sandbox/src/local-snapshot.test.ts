import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapProblem } from "./bwrap.ts";
import { LocalRuntime } from "./local.ts";
import { snapshotHandleSchema } from "./snapshot-rollout.ts";
import { SnapshotStore } from "./snapshot-store.ts";
import { contractTask } from "./testing/contract.ts";
import type { Sandbox, SnapshotHandle, TaskFiles } from "./types.ts";

const asRoot = process.getuid?.() === 0;
const skip = await bwrapProblem(asRoot ? { kind: "setpriv", uid: 65_000 } : { kind: "userns" });
/** /etc/shadow as the host has it (root only): no stored file may hold it. */
const secret = asRoot ? readFileSync("/etc/shadow") : undefined;

/**
 * Python run by the agent: /tmp/swap/<i> (its own file) and /tmp/swap/<i>l (a link to /etc/shadow) swap places
 * (renameat2 RENAME_EXCHANGE) as fast as it can; neither name is ever missing. Without the freeze, a root-side copy
 * that saw a file and then opened a link stores /etc/shadow (seen about once in 160 copies here).
 */
const SWAPPER = [
  "import ctypes, os",
  "libc = ctypes.CDLL(None, use_errno=True)",
  'os.makedirs("/tmp/swap", exist_ok=True)',
  "paths = []",
  "for i in range(16):",
  '  p = f"/tmp/swap/{i}".encode()',
  '  open(p, "w").write("mine")',
  '  os.symlink("/etc/shadow", p + b"l")',
  "  paths.append(p)",
  "while True:",
  "  for p in paths:",
  '    libc.renameat2(-100, p, -100, p + b"l", 2)',
].join("\n");

/** Every entry under `dir` (relative path → what it is), symlinks not followed. */
function storedEntries(dir: string, rel = "", out = new Map<string, string>()): Map<string, string> {
  for (const name of readdirSync(join(dir, rel))) {
    const path = rel ? `${rel}/${name}` : name;
    const info = lstatSync(join(dir, path));
    out.set(
      path,
      info.isSymbolicLink() ? "link" : info.isFile() ? "file" : info.isDirectory() ? "dir" : "other",
    );
    if (info.isDirectory()) storedEntries(dir, path, out);
  }
  return out;
}

/**
 * The local runtime's snapshots carry what the agent wrote outside its workspace: /tmp and the task's writable
 * dirs; the root-side copy follows no link the agent made, opens no FIFO or socket, and reads nothing it swaps in.
 */
describe.skipIf(skip !== undefined)(
  "local runtime (bwrap): snapshots carry /tmp and the writable dirs",
  () => {
    const root = mkdtempSync(join(tmpdir(), "air-local-snapshot-"));
    const storeDir = mkdtempSync(join(tmpdir(), "air-local-snapshot-store-"));
    const store = new SnapshotStore(storeDir);
    let runtime: LocalRuntime;
    let files: TaskFiles & { remove(): void };
    let n = 0;
    const boxes: Sandbox[] = [];
    const acquire = async (restore?: SnapshotHandle) => {
      const box = await runtime.acquire(files, { rolloutId: `r${++n}`, restore });
      boxes.push(box);
      return box;
    };
    const out = async (box: Sandbox, command: string) => (await box.exec(command, 30_000)).output;

    beforeAll(() => {
      const task = contractTask();
      files = { ...task, environment: { dirs: ["/logs/agent"] } };
      runtime = new LocalRuntime({ root, python: "/usr/bin/python3" });
    });
    afterAll(async () => {
      await runtime?.close();
      files?.remove();
      rmSync(root, { recursive: true, force: true });
      rmSync(storeDir, { recursive: true, force: true });
    }, 120_000);

    test("/tmp (also as /var/tmp) and /logs/agent come back with modes, times and owner; the handle is JSON", async () => {
      const box = await acquire();
      await out(
        box,
        [
          "mkdir -p /tmp/d/e && echo t > /tmp/d/e/f && chmod 604 /tmp/d/e/f && touch -d @981173106 /tmp/d/e/f",
          "chmod 711 /tmp/d && touch -d @981173000 /tmp/d && echo v > /var/tmp/v",
          "echo log > /logs/agent/l.txt && chmod 640 /logs/agent/l.txt && touch -d @981173200 /logs/agent/l.txt",
          "cd /tmp/d",
        ].join(" && "),
      );
      const handle = await runtime.saveSnapshot(box, store, `tmp-${n}`);
      expect(handle.outside).toEqual(["/tmp", "/logs/agent"]);
      await out(box, "echo later > /tmp/d/e/f; rm /logs/agent/l.txt");
      const stored = snapshotHandleSchema.parse(JSON.parse(JSON.stringify(handle)));
      expect(stored.outside).toEqual(handle.outside);
      const copy = await acquire(stored);
      expect(
        await out(
          copy,
          "pwd; cat e/f /tmp/v /logs/agent/l.txt; stat -c '%a %Y %U %n' e/f . /logs/agent/l.txt",
        ),
      ).toBe(
        "/tmp/d\nt\nv\nlog\n604 981173106 agent e/f\n711 981173000 agent .\n640 981173200 agent /logs/agent/l.txt\n",
      );
      expect(await out(copy, "stat -c '%a %U' /tmp; touch /tmp/new && echo writable")).toBe(
        `1777 ${asRoot ? "root" : "agent"}\nwritable\n`,
      );
    }, 120_000);

    test("/tmp outlives a shell killed past its timeout (the next bwrap mounts the same directory)", async () => {
      const box = await acquire();
      await out(box, "echo before > /tmp/kept");
      expect((await box.exec("sleep 600", 1500)).timedOut).toBe(true);
      expect(await out(box, "cat /tmp/kept")).toBe("before\n");
    }, 120_000);

    test("attacks: links to host files stay links; odd names, FIFOs and sockets; a swapped link is never read", async () => {
      const box = await acquire();
      // files on the host (links to directories: the next test)
      const links = { shadow: "/etc/shadow", store: join(storeDir, "x.json"), run: join(root, "passwd") };
      await out(
        box,
        [
          ...Object.entries(links).map(([name, target]) => `ln -s '${target}' /tmp/${name}`),
          "mkdir /tmp/odd && echo nl > \"$(printf '/tmp/odd/a\\nb')\" && echo sp > '/tmp/odd/-x y'",
          "mkfifo /tmp/fifo && python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('/tmp/sock')\"",
          // a background writer holding the FIFO open, and one swapping 40 files for links to /etc/shadow and back
          "(exec 3<>/tmp/fifo; sleep 600) >/dev/null 2>&1 &",
          `python3 -c '${SWAPPER}' >/dev/null 2>&1 &`,
        ].join("\n"),
      );
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await Bun.sleep(100))
        if ((await out(box, "ls /tmp/swap | wc -l")).trim() === "32") break;
      const handles: SnapshotHandle[] = [];
      const failures: string[] = [];
      for (let i = 0; i < 40; i++)
        await runtime.saveSnapshot(box, store, `attack-${n}-${i}`).then(
          (h) => handles.push(h),
          (error: unknown) => failures.push(String(error)),
        );
      const leaked = handles.flatMap((h) =>
        [...storedEntries(h.path)]
          .filter(
            ([rel, kind]) => kind === "file" && secret && readFileSync(join(h.path, rel)).equals(secret),
          )
          .map(([rel]) => `${h.id}/${rel}`),
      );
      expect(leaked).toEqual([]);
      expect(failures).toEqual([]);
      for (const h of handles) {
        const entries = storedEntries(join(h.path, "outside", "0"));
        for (const name of Object.keys(links)) expect(entries.get(name)).toBe("link");
        expect(entries.get("odd/a\nb")).toBe("file");
        expect(entries.has("fifo") || entries.has("sock")).toBe(false);
        for (let i = 0; i < 16; i++)
          expect([entries.get(`swap/${i}`), entries.get(`swap/${i}l`)].sort()).toEqual(["file", "link"]);
      }
      const last = handles.at(-1) as SnapshotHandle;
      const copy = await acquire(last);
      expect(
        await out(
          copy,
          "readlink /tmp/shadow /tmp/store /tmp/run; cat \"$(printf '/tmp/odd/a\\nb')\" '/tmp/odd/-x y'; ls /tmp/fifo /tmp/sock 2>&1 | wc -l; cat /tmp/shadow >/dev/null 2>&1 || echo unreadable",
        ),
      ).toBe(`/etc/shadow\n${links.store}\n${links.run}\nnl\nsp\n2\nunreadable\n`);
      await store.prune((id) => id.startsWith("attack-"));
    }, 180_000);

    // SnapshotStore.commit counts stored bytes without following links (Bun's recursive `readdir` follows them).
    test("attacks: links to host directories (/, the store, the run dir) stay links and are not walked", async () => {
      const box = await acquire();
      const links = { top: "/", store: storeDir, run: root };
      await out(
        box,
        Object.entries(links)
          .map(([name, target]) => `ln -s '${target}' /tmp/${name}`)
          .join("; "),
      );
      const handle = await runtime.saveSnapshot(box, store, `dirs-${n}`);
      expect(handle.bytes).toBeLessThan(4096);
      const copy = await acquire(handle);
      expect(await out(copy, "readlink /tmp/top /tmp/store /tmp/run")).toBe(`/\n${storeDir}\n${root}\n`);
    }, 120_000);

    test("a tree stored before /tmp was carried (no `outside`) restores its workspace", async () => {
      const old = join(storeDir, "old-layout");
      mkdirSync(join(old, "sub"), { recursive: true });
      writeFileSync(join(old, "sub", "f"), "old\n");
      const handle: SnapshotHandle = {
        id: "old-layout",
        format: "tree",
        path: old,
        cwd: `${SANDBOX}/sub`,
        bytes: 4,
        createdAtMs: Date.now(),
      };
      const copy = await acquire(snapshotHandleSchema.parse(handle));
      expect(await out(copy, "pwd; cat f; ls -A /tmp | wc -l")).toBe(`${SANDBOX}/sub\nold\n0\n`);
    }, 120_000);

    test("a fork copies the parent's /tmp and /logs/agent; then each has its own", async () => {
      const parent = await acquire();
      await out(parent, "echo p > /tmp/p && chmod 600 /tmp/p && echo pl > /logs/agent/pl");
      const child = await (runtime.fork as NonNullable<typeof runtime.fork>)(parent, files, {
        rolloutId: `r${++n}`,
      });
      boxes.push(child);
      expect(await out(child, "cat /tmp/p /logs/agent/pl; stat -c %a /tmp/p; echo c > /tmp/c")).toBe(
        "p\npl\n600\n",
      );
      expect(await out(parent, "ls /tmp")).toBe("p\n");
    }, 120_000);
  },
);

const SANDBOX = "/home/agent/workspace";
