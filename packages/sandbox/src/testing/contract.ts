import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SHELL_RESTARTED } from "../shell.ts";
import { SnapshotStore, SnapshotUnavailableError } from "../snapshot-store.ts";
import type { Runtime, Sandbox, SnapshotHandle, TaskFiles } from "../types.ts";
import { snapshotTests } from "./contract-snapshots.ts";

/** A runtime under test, how to make it, and what is left of it after `close` (must be nothing). */
export interface ContractSubject {
  name: string;
  /** Why the suite is skipped here (no bwrap, no docker engine), or undefined. */
  skip?: string;
  make(): Runtime;
  /** Containers or directories of this runtime still there after `close` (must be empty). */
  leftovers(): Promise<string[]>;
  /** Its stored snapshots say how many bytes left the sandbox (`SnapshotHandle.transferredBytes`). */
  transfers?: boolean;
}

/**
 * A small task bundle: `workspace/` (README, `data/train.csv` read-only, the agent's own `evaluate.py`) and
 * `evaluation/` (the pristine `evaluate.py`, which prints what it sees as JSON, and a secret answer file).
 * @example const files = contractTask(); await runtime.acquire(files, { rolloutId: "r1" });
 */
export function contractTask(): TaskFiles & { remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "air-contract-"));
  mkdirSync(join(dir, "workspace", "data"), { recursive: true });
  mkdirSync(join(dir, "evaluation"), { recursive: true });
  writeFileSync(join(dir, "workspace", "README.md"), "the task\n");
  writeFileSync(join(dir, "workspace", "data", "train.csv"), "x,y\n1,2\n");
  writeFileSync(join(dir, "workspace", "evaluate.py"), "print('{\"forged\": 1}')\n");
  writeFileSync(join(dir, "evaluation", "answer.txt"), "42\n");
  writeFileSync(
    join(dir, "evaluation", "evaluate.py"),
    [
      "import json, os",
      "files = sorted(os.path.relpath(os.path.join(r, f), '.') for r, _, fs in os.walk('.') for f in fs)",
      "sub = open('submission.txt').read().strip() if os.path.exists('submission.txt') else None",
      "data = open('data/train.csv').read()",
      "try:\n    open('written-by-evaluation.txt', 'w').write('x')\nexcept OSError:\n    pass",
      "print(json.dumps({'files': files, 'submission': sub, 'answer': open('answer.txt').read().strip(), 'data': data}))",
      "",
    ].join("\n"),
  );
  return {
    key: `contract-${process.pid}`,
    dir,
    readOnly: ["data"],
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

const EVALUATE = { command: "python3 evaluate.py", timeoutMs: 60_000 };

/** What `evaluate.py` of {@link contractTask} printed. */
interface Seen {
  files: string[];
  submission: string | null;
  answer: string;
  data: string;
}

async function evaluated(box: Sandbox): Promise<Seen> {
  const out = await box.evaluate(EVALUATE);
  expect(out.stderr).toBe("");
  expect(out.exitCode).toBe(0);
  return JSON.parse(out.stdout.trim().split("\n").at(-1) as string) as Seen;
}

/**
 * The contract every runtime keeps, run against a real one: fresh workspaces, a persistent shell with its cwd,
 * timeouts that kill what the command started, a shell that exits and is replaced, read-only paths, evaluation on
 * a copy with the pristine files that the agent never sees, snapshots, forks (when the runtime has them), and
 * nothing left after `close`.
 * @example contractSuite({ name: "local (bwrap)", make: () => new LocalRuntime({ ... }), leftovers: async () => [] });
 */
export function contractSuite(subject: ContractSubject): void {
  describe.skipIf(subject.skip !== undefined)(`sandbox contract: ${subject.name}`, () => {
    let runtime: Runtime;
    let files: ReturnType<typeof contractTask>;
    let n = 0;
    const acquire = (snapshot?: Uint8Array) => runtime.acquire(files, { rolloutId: `c${++n}`, snapshot });

    beforeAll(() => {
      files = contractTask();
      runtime = subject.make();
    });
    afterAll(async () => {
      await runtime?.close();
      files?.remove();
    }, 120_000);

    test("a fresh workspace of the task; the shell keeps its directory between commands", async () => {
      const box = await acquire();
      try {
        const ls = await box.exec("ls; cat data/train.csv", 30_000);
        expect(ls.output).toBe("README.md\ndata\nevaluate.py\nx,y\n1,2\n");
        expect(ls.exitCode).toBe(0);
        expect(ls.cwd).toBe(box.workspace);
        expect((await box.exec("mkdir -p sub && cd sub && false", 30_000)).exitCode).toBe(1);
        const pwd = await box.exec("pwd", 30_000);
        expect(pwd.output.trim()).toBe(`${box.workspace}/sub`);
        expect(pwd.cwd).toBe(`${box.workspace}/sub`);
        expect(await box.alive()).toBe(true);
      } finally {
        await runtime.release(box, true);
      }
      // the next sandbox of the task does not see what the last one wrote
      const next = await acquire();
      try {
        expect((await next.exec("ls", 30_000)).output).toBe("README.md\ndata\nevaluate.py\n");
      } finally {
        await runtime.release(next, true);
      }
    }, 120_000);

    test("a command past its timeout is killed with what it started; the shell goes on in the same directory", async () => {
      const box = await acquire();
      try {
        await box.exec("mkdir -p d && cd d", 30_000);
        const marker = `7${process.pid % 1000}${n}`;
        const slow = await box.exec(`(sleep ${marker} &); sleep ${marker}`, 1500);
        expect(slow.timedOut).toBe(true);
        expect(slow.exitCode).toBe(137);
        const after = await box.exec(`pwd; ps -eo args | grep -c "^sleep ${marker}"`, 30_000);
        expect(after.output).toBe(`${box.workspace}/d\n0\n`);
        expect(after.timedOut).toBe(false);
      } finally {
        await runtime.release(box, true);
      }
    }, 120_000);

    test("a shell that exits is replaced and the agent is told", async () => {
      const box = await acquire();
      try {
        const gone = await box.exec("exit 3", 30_000);
        expect(gone.output).toStartWith(SHELL_RESTARTED);
        expect(gone.exitCode).toBe(1);
        expect((await box.exec("echo back", 30_000)).output).toBe("back\n");
      } finally {
        await runtime.release(box, true);
      }
    }, 120_000);

    test("read-only paths cannot be changed; the evaluation files are nowhere in the sandbox", async () => {
      const box = await acquire();
      try {
        await box.exec("echo 9,9 >> data/train.csv; echo x > data/new.csv", 30_000);
        expect((await box.exec("cat data/train.csv; ls data", 30_000)).output).toBe("x,y\n1,2\ntrain.csv\n");
        const hunt = await box.exec(
          "find / -name answer.txt -not -path '/proc/*' 2>/dev/null | head -3",
          60_000,
        );
        expect(hunt.output).toBe("");
        expect((await box.exec("ls answer.txt 2>&1; echo $?", 30_000)).output).toEndWith("2\n");
      } finally {
        await runtime.release(box, true);
      }
    }, 120_000);

    test("evaluation: the workspace and the pristine files, symlinks dropped, nothing written back", async () => {
      const box = await acquire();
      try {
        await box.exec(
          "echo mine > submission.txt; ln -s /etc/passwd link.txt; echo x > evaluate.py",
          30_000,
        );
        const seen = await evaluated(box);
        expect(seen.submission).toBe("mine");
        expect(seen.answer).toBe("42");
        expect(seen.data).toBe("x,y\n1,2\n");
        expect(seen.files).toEqual([
          "README.md",
          "answer.txt",
          "data/train.csv",
          "evaluate.py",
          "submission.txt",
        ]);
        const ls = await box.exec("ls; cat evaluate.py", 30_000);
        expect(ls.output).toBe("README.md\ndata\nevaluate.py\nlink.txt\nsubmission.txt\nx\n");
        // a second evaluation starts from the workspace again
        expect((await evaluated(box)).files).not.toContain("written-by-evaluation.txt");
      } finally {
        await runtime.release(box, true);
      }
    }, 120_000);

    test("the evaluation reads the pristine read-only paths whatever the agent did; the bundle is untouched", async () => {
      const box = await acquire();
      try {
        // docker: the agent may move the root-owned directory aside and make its own; local: a read-only mount
        await box.exec(
          "chmod -R u+w data; echo 8 >> data/train.csv; mv data gone; mkdir -p data; echo forged > data/train.csv",
          30_000,
        );
        await box.exec("echo 0 > submission.txt", 30_000);
        expect((await evaluated(box)).data).toBe("x,y\n1,2\n");
        expect(readFileSync(join(files.dir, "workspace", "data", "train.csv"), "utf8")).toBe("x,y\n1,2\n");
      } finally {
        await runtime.release(box, true);
      }
      const next = await acquire();
      try {
        expect((await next.exec("cat data/train.csv; ls", 30_000)).output).toBe(
          "x,y\n1,2\nREADME.md\ndata\nevaluate.py\n",
        );
      } finally {
        await runtime.release(next, true);
      }
    }, 120_000);

    test("a snapshot restores the workspace in a new sandbox", async () => {
      const box = await acquire();
      let copy: Sandbox | undefined;
      try {
        // 5 MB: more than a shell's output holds (docker once sent snapshots through one)
        await box.exec("echo kept > kept.txt; head -c 5000000 /dev/urandom > model.bin", 30_000);
        copy = await acquire(await box.snapshot());
        expect((await copy.exec("cat kept.txt; cat data/train.csv; wc -c < model.bin", 30_000)).output).toBe(
          "kept\nx,y\n1,2\n5000000\n",
        );
        await copy.exec("echo 9 >> data/train.csv", 30_000);
        expect((await copy.exec("cat data/train.csv", 30_000)).output).toBe("x,y\n1,2\n");
      } finally {
        await runtime.release(box, true);
        if (copy) await runtime.release(copy, true);
      }
    }, 120_000);

    test("a stored snapshot: files, modes and the directory come back in a new sandbox; listed, pruned, then refused", async () => {
      const box = await acquire();
      const store = new SnapshotStore(mkdtempSync(join(tmpdir(), "air-contract-snapshots-")));
      let copy: Sandbox | undefined;
      try {
        await box.exec(
          "mkdir -p sub/deep && echo kept > sub/deep/f && chmod 640 sub/deep/f && printf '#!/bin/sh\\necho ran\\n' > run.sh && chmod 755 run.sh && chmod 750 sub && cd sub/deep",
          30_000,
        );
        const handle = await runtime.saveSnapshot(box, store, `snap-${n}`);
        await box.exec("echo later > f; cd ..", 30_000);
        // a handle is plain JSON: stored, then read back by another process
        const stored = JSON.parse(JSON.stringify(handle)) as SnapshotHandle;
        expect(stored).toMatchObject({ id: `snap-${n}`, cwd: `${box.workspace}/sub/deep` });
        expect(stored.bytes).toBeGreaterThan(0);
        copy = await runtime.acquire(files, { rolloutId: `c${++n}`, restore: stored });
        expect(
          (
            await copy.exec(
              "pwd; cat f; stat -c '%a %n' f .. ../../run.sh; ../../run.sh; cat ../../data/train.csv",
              30_000,
            )
          ).output,
        ).toBe(`${box.workspace}/sub/deep\nkept\n640 f\n750 ..\n755 ../../run.sh\nran\nx,y\n1,2\n`);
        await copy.exec("echo 9 >> ../../data/train.csv", 30_000);
        expect((await copy.exec("cat ../../data/train.csv", 30_000)).output).toBe("x,y\n1,2\n");
        expect((await store.list()).map((h) => h.id)).toEqual([stored.id]);
        expect(await store.prune((id) => id === stored.id)).toEqual([stored.id]);
        expect(await store.list()).toEqual([]);
        expect(existsSync(stored.path)).toBe(false);
        const refused = await runtime.acquire(files, { rolloutId: `c${++n}`, restore: stored }).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(refused).toBeInstanceOf(SnapshotUnavailableError);
        expect(String(refused)).toContain(stored.id);
      } finally {
        await runtime.release(box, true);
        if (copy) await runtime.release(copy, true);
        rmSync(store.dir, { recursive: true, force: true });
      }
    }, 120_000);

    snapshotTests({
      runtime: () => runtime,
      files: () => files,
      rolloutId: () => `c${++n}`,
      transfers: subject.transfers === true,
    });

    test("a fork copies the live workspace; the two go their own ways", async () => {
      if (!runtime.fork) return;
      const parent = await acquire();
      let child: Sandbox | undefined;
      try {
        await parent.exec("echo 1 > state.txt", 30_000);
        child = await runtime.fork(parent, files, { rolloutId: `c${++n}` });
        expect((await child.exec("cat state.txt; cat data/train.csv", 30_000)).output).toBe("1\nx,y\n1,2\n");
        await child.exec("echo child > state.txt; echo 9 >> data/train.csv", 30_000);
        await parent.exec("echo parent > only-parent.txt", 30_000);
        expect((await parent.exec("cat state.txt; ls", 30_000)).output).toBe(
          "1\nREADME.md\ndata\nevaluate.py\nonly-parent.txt\nstate.txt\n",
        );
        expect((await child.exec("cat state.txt data/train.csv; ls", 30_000)).output).toBe(
          "child\nx,y\n1,2\nREADME.md\ndata\nevaluate.py\nstate.txt\n",
        );
        expect((await evaluated(child)).files).toContain("state.txt");
      } finally {
        await runtime.release(parent, true);
        if (child) await runtime.release(child, true);
      }
    }, 120_000);

    test("nothing is left after close", async () => {
      await acquire();
      await runtime.close();
      expect(await subject.leftovers()).toEqual([]);
    }, 120_000);
  });
}
