import { expect, test } from "bun:test";
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shellQuote } from "../shell.ts";
import { SnapshotStore } from "../snapshot-store.ts";
import { storedWorkspace } from "../snapshot-tar.ts";
import type { Runtime, Sandbox, SnapshotHandle, TaskFiles } from "../types.ts";

/** What the snapshot tests of the contract suite need of it. */
export interface SnapshotSuiteContext {
  runtime(): Runtime;
  files(): TaskFiles;
  /** A fresh rollout id. */
  rolloutId(): string;
  /** The runtime reports `SnapshotHandle.transferredBytes` (what left the sandbox). */
  transfers: boolean;
}

/**
 * The workspace as the agent sees it, without the read-only `data`: per entry its path, kind, mode, size, whole
 * seconds of its modification time, and its content's md5 (files) or target (symlinks); names may hold newlines.
 */
const LISTING = `
import hashlib, json, os
out = []
for root, dirs, files in os.walk("."):
    for name in dirs + files:
        p = os.path.join(root, name)[2:]
        if p == "data":
            continue
        st = os.lstat(p)
        kind = "l" if os.path.islink(p) else "d" if os.path.isdir(p) else "f"
        extra = os.readlink(p) if kind == "l" else hashlib.md5(open(p, "rb").read()).hexdigest() if kind == "f" else ""
        out.append([p, kind, oct(st.st_mode & 0o7777), st.st_size if kind == "f" else 0, int(st.st_mtime) if kind != "l" else 0, extra])
    dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d)) and os.path.join(root, d) != "./data"]
print(json.dumps(sorted(out)))
`;

/** A directory path of 123 characters. */
const LONG = `${"d".repeat(60)}/${"e".repeat(62)}`;

async function listing(box: Sandbox): Promise<unknown> {
  const out = await box.exec(
    `(cd ${shellQuote(box.workspace)} && python3 -c ${shellQuote(LISTING)})`,
    60_000,
  );
  expect(out.exitCode).toBe(0);
  return JSON.parse(out.output);
}

/** The stored tree's entries (never following a link): path → "d", "l -> target" or the file's content. */
function storedTree(dir: string, out = new Map<string, string>(), prefix = ""): Map<string, string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const rel = prefix + name;
    const info = lstatSync(path);
    if (info.isDirectory()) {
      out.set(rel, "d");
      storedTree(path, out, `${rel}/`);
    } else out.set(rel, info.isSymbolicLink() ? `l -> ${readlinkSync(path)}` : readFileSync(path, "utf8"));
  }
  return out;
}

/**
 * Stored snapshots are incremental and exact, survive their predecessor's pruning, and never let the agent make
 * the snapshot step read what it cannot (symlinks to root-only files, a file or directory swapped for a link).
 */
export function snapshotTests(ctx: SnapshotSuiteContext): void {
  const restore = (handle: SnapshotHandle) =>
    ctx.runtime().acquire(ctx.files(), { rolloutId: ctx.rolloutId(), restore: handle });

  /** A sandbox of the task and a store of its own for `run`; both gone afterwards, whatever `run` did. */
  const withStoredBox = async (
    label: string,
    run: (it: { runtime: Runtime; box: Sandbox; store: SnapshotStore; id: string }) => Promise<void>,
  ): Promise<void> => {
    const runtime = ctx.runtime();
    const box = await runtime.acquire(ctx.files(), { rolloutId: ctx.rolloutId() });
    const store = new SnapshotStore(mkdtempSync(join(tmpdir(), `air-contract-${label}-`)));
    try {
      await run({ runtime, box, store, id: ctx.rolloutId() });
    } finally {
      await runtime.release(box, true);
      rmSync(store.dir, { recursive: true, force: true });
    }
  };

  test("stored snapshots: an unchanged big file is stored once; changed, deleted, renamed and mode-changed files restore exactly; the previous one pruned, the next is complete", async () => {
    await withStoredBox("incremental", async ({ runtime, box, store, id }) => {
      await box.exec(
        "head -c 3000000 /dev/urandom > big.bin; mkdir -p sub/deep empty; echo keep > keep.txt; echo c > change.txt; " +
          "echo g > gone.txt; echo m > move.txt; printf '#!/bin/sh\\necho ran\\n' > mode.sh; printf AAAA > same.txt; " +
          "ln -s keep.txt link; ln -s sub dirlink; echo d > sub/deep/f; " +
          // past tar's 100-byte name field (GNU long-name members)
          `mkdir -p ${LONG}; echo long > ${LONG}/${"f".repeat(120)}; ln -s ${LONG}/${"f".repeat(120)} long-link`,
        30_000,
      );
      const h0 = await runtime.saveSnapshot(box, store, `${id}-t0`);
      // same.txt: same size and modification time, other bytes (only its change time tells)
      await box.exec(
        "echo more >> change.txt; rm gone.txt; mv move.txt sub/moved.txt; chmod 755 mode.sh; " +
          "touch -r same.txt .ref; printf BBBB > same.txt; touch -r .ref same.txt; rm .ref; rm link; " +
          "ln -s change.txt link; touch -d '2020-01-02 03:04:05' keep.txt; mkdir sub/new; chmod 700 sub/deep; " +
          "cd sub/deep",
        30_000,
      );
      const at1 = await listing(box);
      const h1 = await runtime.saveSnapshot(box, store, `${id}-t1`);
      expect(statSync(join(storedWorkspace(h1), "big.bin")).ino).toBe(
        statSync(join(storedWorkspace(h0), "big.bin")).ino,
      );
      if (ctx.transfers) {
        expect(h0.transferredBytes).toBeGreaterThan(3_000_000);
        expect(h1.transferredBytes).toBeLessThan(100_000);
      }
      const restores = async (handle: SnapshotHandle, seen: unknown, cwd: string) => {
        const copy = await restore(JSON.parse(JSON.stringify(handle)) as SnapshotHandle);
        try {
          expect(await listing(copy)).toEqual(seen);
          expect((await copy.exec("pwd", 30_000)).output).toBe(`${cwd}\n`);
        } finally {
          await runtime.release(copy, true);
        }
      };
      await restores(h1, at1, `${box.workspace}/sub/deep`);
      // the sandbox's previous stored tree pruned: the next snapshot cannot link to it and is complete
      expect(await store.prune((id) => id !== h0.id)).toEqual([h1.id]);
      await box.exec("echo new > new.txt; rm sub/moved.txt; cd ..", 30_000);
      const at2 = await listing(box);
      const h2 = await runtime.saveSnapshot(box, store, `${id}-t2`);
      if (ctx.transfers) expect(h2.transferredBytes).toBeGreaterThan(3_000_000);
      await restores(h2, at2, `${box.workspace}/sub`);
    });
  }, 240_000);

  test("stored snapshots never follow the agent's symlinks: links to root-only files, a file and a directory swapped for links, odd names", async () => {
    const nl = `"$(printf 'new\\nline')"`;
    await withStoredBox("attack", async ({ runtime, box, store, id }) => {
      await box.exec(
        `echo plain > plain.txt; mkdir d; echo mine > d/passwd; ln -s /etc/shadow shadow; ln -s /var/lib/air air; ` +
          `ln -s /var/lib/air/snapshot/manifest manifest; ln /etc/shadow hard 2>/dev/null; printf x > ${nl}; ` +
          `printf y > 'sp ace.txt'`,
        30_000,
      );
      const h0 = await runtime.saveSnapshot(box, store, `${id}-t0`);
      await box.exec(
        `rm plain.txt; ln -s /etc/shadow plain.txt; mv d d.old; ln -s /etc d; printf z > ${nl}`,
        30_000,
      );
      const h1 = await runtime.saveSnapshot(box, store, `${id}-t1`);
      const common = {
        shadow: "l -> /etc/shadow",
        air: "l -> /var/lib/air",
        manifest: "l -> /var/lib/air/snapshot/manifest",
        "sp ace.txt": "y",
        "README.md": "the task\n",
        "evaluate.py": "print('{\"forged\": 1}')\n",
      };
      expect(Object.fromEntries(storedTree(storedWorkspace(h0)))).toEqual({
        ...common,
        "plain.txt": "plain\n",
        d: "d",
        "d/passwd": "mine\n",
        "new\nline": "x",
      });
      expect(Object.fromEntries(storedTree(storedWorkspace(h1)))).toEqual({
        ...common,
        "plain.txt": "l -> /etc/shadow",
        d: "l -> /etc",
        "d.old": "d",
        "d.old/passwd": "mine\n",
        "new\nline": "z",
      });
      const copy = await restore(h1);
      try {
        const seen = await copy.exec(
          `cat plain.txt shadow 2>&1 | grep -c 'Permission denied'; readlink d plain.txt; cat d.old/passwd ${nl}`,
          30_000,
        );
        expect(seen.output).toBe("2\n/etc\n/etc/shadow\nmine\nz");
      } finally {
        await runtime.release(copy, true);
      }
    });
  }, 240_000);

  test("stored snapshots carry the agent's /tmp and /var/tmp: modes and times come back as the agent's; links to root-only files stay links, a FIFO is left out", async () => {
    await withStoredBox("outside", async ({ runtime, box, store, id }) => {
      const made = await box.exec(
        "mkdir -p /tmp/d/e && echo t > /tmp/d/e/f && chmod 604 /tmp/d/e/f && touch -d @981173106 /tmp/d/e/f && " +
          "chmod 711 /tmp/d && touch -d @981173000 /tmp/d && echo v > /var/tmp/v && ln /tmp/d/e/f /var/tmp/hl && " +
          "ln -s /etc/shadow /tmp/shadow && ln -s /var/lib/air /tmp/air && ln -s /etc /tmp/etc && " +
          // a FIFO nobody writes to: opening it for reading would block the snapshot
          "mkfifo /tmp/fifo && cd /tmp/d && echo made",
        30_000,
      );
      expect(made.output).toBe("made\n");
      const handle = await runtime.saveSnapshot(box, store, `${id}-t0`);
      const tmp = handle.outside?.indexOf("/tmp") ?? -1;
      expect(tmp).toBeGreaterThanOrEqual(0);
      const stored = Object.fromEntries(storedTree(join(handle.path, "outside", String(tmp))));
      expect(stored).toMatchObject({
        shadow: "l -> /etc/shadow",
        air: "l -> /var/lib/air",
        etc: "l -> /etc",
        d: "d",
        "d/e": "d",
        "d/e/f": "t\n",
      });
      expect(stored.fifo).toBeUndefined();
      const copy = await restore(JSON.parse(JSON.stringify(handle)) as SnapshotHandle);
      try {
        const seen = await copy.exec(
          "pwd; cat e/f /var/tmp/v /var/tmp/hl; stat -c '%a %Y' e/f .; readlink /tmp/shadow /tmp/air; " +
            '[ "$(stat -c %U e/f /tmp/d /var/tmp/v | sort -u)" = "$(id -un)" ] && echo mine; ' +
            "cat /tmp/shadow 2>&1 | grep -c 'Permission denied'; [ -e /tmp/fifo ] || echo no-fifo",
          30_000,
        );
        expect(seen.output).toBe(
          "/tmp/d\nt\nv\nt\n604 981173106\n711 981173000\n/etc/shadow\n/var/lib/air\nmine\n1\nno-fifo\n",
        );
      } finally {
        await runtime.release(copy, true);
      }
    });
  }, 240_000);

  test("exported variables come back in a restore and a fork, values literal (quotes, $, newlines); one unset since is unset", async () => {
    await withStoredBox("exports", async ({ runtime, box, store, id }) => {
      const odd = `a "b" \\c $HOME \`id\` $(id)\nnext line`;
      await box.exec(
        `export AIR_ODD=${shellQuote(odd)} AIR_PLAIN=1 PATH="/opt/venv/bin:$PATH"; export AIR_BARE; unset -v LANG; ` +
          "export() { echo 'declare -x AIR_FORGED=\"1\"'; }; AIR_LOCAL=not-exported",
        30_000,
      );
      // what a child process of the shell gets: exported variables only
      const shown = (names: string) =>
        `printenv PATH | cut -d: -f1; for v in ${names}; do printenv $v || echo "($v unset)"; done; declare -p AIR_BARE`;
      const all = "AIR_ODD AIR_PLAIN LANG AIR_FORGED AIR_LOCAL";
      const want = `/opt/venv/bin\n${odd}\n1\n(LANG unset)\n(AIR_FORGED unset)\n(AIR_LOCAL unset)\ndeclare -x AIR_BARE\n`;
      expect((await box.exec(shown(all), 30_000)).output).toBe(want);
      const handle = await runtime.saveSnapshot(box, store, `${id}-t0`);
      await box.exec("unset -f export; export AIR_PLAIN=2 AIR_LATER=x", 30_000);
      const copy = await restore(JSON.parse(JSON.stringify(handle)) as SnapshotHandle);
      try {
        expect((await copy.exec(shown(`${all} AIR_LATER`), 30_000)).output).toBe(
          want.replace("declare", "(AIR_LATER unset)\ndeclare"),
        );
        // shell variables (not exported) and functions are not carried
        expect((await copy.exec("[ -v AIR_LOCAL ] || echo none; type -t export", 30_000)).output).toBe(
          "none\nbuiltin\n",
        );
      } finally {
        await runtime.release(copy, true);
      }
      if (!runtime.fork) return;
      const child = await runtime.fork(box, ctx.files(), { rolloutId: ctx.rolloutId() });
      try {
        expect((await child.exec(shown("AIR_PLAIN AIR_LATER LANG"), 30_000)).output).toBe(
          "/opt/venv/bin\n2\nx\n(LANG unset)\ndeclare -x AIR_BARE\n",
        );
      } finally {
        await runtime.release(child, true);
      }
    });
  }, 120_000);
}
