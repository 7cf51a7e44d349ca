import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Runtime, Sandbox, TaskFiles } from "../types.ts";
import type { ContractSubject } from "./contract.ts";

const WORKDIR = "/srv/task";
const LOGS = "/logs/agent";

/**
 * A task with its own environment, as env-harbor makes them: docker builds `FROM <image>` with a WORKDIR holding
 * `from-image.txt` (the image is the workspace); local lays the same file into a bundle mounted at the WORKDIR.
 * Plus a `checks/` folder (what a verifier's tests are) and a `helper/` folder (what an oracle's solution is).
 */
export function environmentTask(
  kind: "docker" | "local",
  image: string,
): TaskFiles & { host: string; remove(): void } {
  const host = mkdtempSync(join(tmpdir(), "air-env-contract-"));
  const dir = join(host, "bundle");
  mkdirSync(join(dir, "workspace"), { recursive: true });
  mkdirSync(join(dir, "evaluation"));
  mkdirSync(join(host, "checks"));
  mkdirSync(join(host, "helper"));
  writeFileSync(
    join(host, "checks", "check.sh"),
    [
      "#!/bin/bash",
      `out=${LOGS.replace("agent", "verifier")}`,
      'ls -A "$out" > /tmp/seen-before',
      `{ cat ${WORKDIR}/answer.txt; cat /opt/outside.txt 2>/dev/null || echo no-outside; echo "$TASK_VAR $CHECK_VAR"; cat /tmp/seen-before; } > "$out/result.txt"`,
      'pgrep -f agent-loop >/dev/null && echo alive >> "$out/result.txt"',
      "echo checked",
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  writeFileSync(
    join(host, "helper", "write.sh"),
    `echo "helped $TASK_VAR $HELP_VAR" > ${WORKDIR}/helped.txt\n`,
  );
  const environment = {
    env: { TASK_VAR: "task-var" },
    memoryMb: 512,
    cpus: 1,
    dirs: [LOGS, "/logs/verifier"],
    workdir: WORKDIR,
  };
  if (kind === "docker") {
    const context = join(host, "environment");
    mkdirSync(context);
    writeFileSync(
      join(context, "Dockerfile"),
      `FROM ${image}\nWORKDIR ${WORKDIR}\nRUN echo image > from-image.txt\n`,
    );
    return {
      key: `env-contract-${process.pid}`,
      dir,
      readOnly: [],
      environment: {
        ...environment,
        build: { context, repo: `air-env-contract-${process.pid}`, baseImages: {}, timeoutMs: 300_000 },
      },
      host,
      remove: () => rmSync(host, { recursive: true, force: true }),
    };
  }
  writeFileSync(join(dir, "workspace", "from-image.txt"), "image\n");
  return {
    key: `env-contract-${process.pid}`,
    dir,
    readOnly: [],
    environment,
    host,
    remove: () => rmSync(host, { recursive: true, force: true }),
  };
}

/**
 * What env-harbor asks of every runtime it uses, against a real one: a task's own environment (WORKDIR, env,
 * writable dirs, memory limit), a command run with host folders visible for its duration (the oracle), an
 * evaluation over a copy of the final state with folders, variables and an emptied collect directory (the
 * verifier) that no agent process reaches, the bytes written, snapshots, and forks whose siblings never see
 * each other's files.
 * @example environmentSuite({ name: "local (bwrap)", make: () => new LocalRuntime({ ... }), leftovers: async () => [] }, "local", image);
 */
export function environmentSuite(subject: ContractSubject, kind: "docker" | "local", image: string): void {
  describe.skipIf(subject.skip !== undefined)(`sandbox contract, task environments: ${subject.name}`, () => {
    let runtime: Runtime;
    let files: ReturnType<typeof environmentTask>;
    let n = 0;
    const acquire = (snapshot?: Uint8Array) => runtime.acquire(files, { rolloutId: `e${++n}`, snapshot });
    const out = async (box: Sandbox, command: string) => (await box.exec(command, 60_000)).output;

    beforeAll(async () => {
      files = environmentTask(kind, image);
      runtime = subject.make();
      await runtime.prepareTask?.(files);
    }, 600_000);
    afterAll(async () => {
      await runtime?.close();
      files?.remove();
    }, 120_000);

    test("the agent starts in the task's WORKDIR with its files, variables, writable dirs and memory limit", async () => {
      const box = await acquire();
      try {
        expect(box.workspace).toBe(WORKDIR);
        expect(await out(box, `pwd; cat from-image.txt; echo $TASK_VAR; touch ${LOGS}/x && echo ok`)).toBe(
          `${WORKDIR}\nimage\ntask-var\nok\n`,
        );
        // docker: the cgroup's limit (v2, else v1); local: RLIMIT_DATA
        const limit = await out(
          box,
          "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || echo $(( $(ulimit -d) * 1024 ))",
        );
        expect(Number(limit.trim())).toBe(512 * 1024 * 1024);
      } finally {
        await runtime.release(box, true);
      }
    }, 300_000);

    test("run: host folders are seen for the command only; what it writes stays", async () => {
      const box = await acquire();
      try {
        expect(box.run).toBeDefined();
        const r = await box.run?.({
          command: "bash /helper/write.sh",
          timeoutMs: 60_000,
          folders: [{ src: join(files.host, "helper"), dest: "/helper" }],
          env: { HELP_VAR: "help-var" },
        });
        expect(r?.exitCode).toBe(0);
        expect(await out(box, "cat helped.txt; ls /helper 2>&1 | grep -c 'No such file'")).toBe(
          "helped task-var help-var\n1\n",
        );
      } finally {
        await runtime.release(box, true);
      }
    }, 300_000);

    test("evaluation: the final state, its folders, variables, an emptied collect dir, no agent process", async () => {
      const box = await acquire();
      try {
        await out(
          box,
          [
            "echo 42 > answer.txt",
            "echo planted > /logs/verifier/result.txt; echo planted > /logs/verifier/old.txt",
            // docker: state outside the WORKDIR is part of the final state (local: the host's, read-only)
            "(echo outside > /opt/outside.txt) 2>/dev/null",
            "nohup bash -c 'exec -a agent-loop sleep 600' >/dev/null 2>&1 &",
          ].join("\n"),
        );
        const result = await box.evaluate({
          command: "/checks/check.sh",
          timeoutMs: 60_000,
          folders: [{ src: join(files.host, "checks"), dest: "/checks" }],
          env: { CHECK_VAR: "check-var" },
          collect: { dir: "/logs/verifier", files: ["result.txt", "missing.txt"] },
        });
        expect(result.exitCode).toBe(0);
        expect(result.stdout).toBe("checked\n");
        const outside = kind === "docker" ? "outside" : "no-outside";
        expect(result.collected).toEqual({ "result.txt": `42\n${outside}\ntask-var check-var\n` });
        // the agent's sandbox is as it was: its plants are there, the folders never were
        expect(
          await out(box, "cat /logs/verifier/result.txt; ls /checks 2>&1 | grep -c 'No such file'"),
        ).toBe("planted\n1\n");
      } finally {
        await runtime.release(box, true);
      }
    }, 300_000);

    test("an evaluation past its timeout is stopped and says so", async () => {
      const box = await acquire();
      try {
        const started = Date.now();
        const result = await box.evaluate({ command: "sleep 600", timeoutMs: 2000 });
        expect(result.timedOut).toBe(true);
        expect(Date.now() - started).toBeLessThan(60_000);
      } finally {
        await runtime.release(box, true);
      }
    }, 300_000);

    test("written bytes grow with what the agent writes", async () => {
      const box = await acquire();
      try {
        const before = (await box.writtenBytes?.()) ?? 0;
        await out(box, "head -c 3000000 /dev/zero > big.bin");
        expect(((await box.writtenBytes?.()) ?? 0) - before).toBeGreaterThanOrEqual(3_000_000);
      } finally {
        await runtime.release(box, true);
      }
    }, 300_000);

    test("a snapshot restores the WORKDIR in a new sandbox", async () => {
      const box = await acquire();
      let copy: Sandbox | undefined;
      try {
        await out(box, "echo kept > kept.txt");
        copy = await acquire(await box.snapshot());
        expect(await out(copy, "pwd; cat kept.txt from-image.txt")).toBe(`${WORKDIR}\nkept\nimage\n`);
      } finally {
        await runtime.release(box, true);
        if (copy) await runtime.release(copy, true);
      }
    }, 300_000);

    test("forks: each sibling starts from the parent's state (files, exported variables); no sibling sees another's files", async () => {
      expect(runtime.fork).toBeDefined();
      const parent = await acquire();
      const siblings: Sandbox[] = [];
      try {
        await out(parent, "mkdir -p sub && echo shared > sub/state.txt && export FROM_PARENT=1");
        for (const i of [1, 2])
          siblings.push(
            await (runtime.fork as NonNullable<Runtime["fork"]>)(parent, files, { rolloutId: `e-fork${i}` }),
          );
        const [a, b] = siblings as [Sandbox, Sandbox];
        await out(a, "echo a > sub/only-a.txt; echo a > sub/state.txt");
        await out(b, "echo b > sub/only-b.txt");
        await out(parent, "echo p > sub/only-parent.txt");
        expect(await out(a, "cd sub && ls && cat state.txt")).toBe("only-a.txt\nstate.txt\na\n");
        expect(await out(b, "cd sub && ls && cat state.txt && printenv FROM_PARENT")).toBe(
          "only-b.txt\nstate.txt\nshared\n1\n",
        );
        expect(await out(parent, "cd sub && ls && cat state.txt")).toBe(
          "only-parent.txt\nstate.txt\nshared\n",
        );
        const seen = await a.evaluate({
          command: "ls sub",
          timeoutMs: 60_000,
        });
        expect(seen.stdout).toBe("only-a.txt\nstate.txt\n");
        // a fork of a fork (a deeper tree), one released before its own fork: nothing is left after close (last test)
        const fork = (from: Sandbox, rolloutId: string) =>
          (runtime.fork as NonNullable<Runtime["fork"]>)(from, files, { rolloutId });
        const aa = await fork(a, "e-fork1-1");
        expect(await out(aa, `ls ${WORKDIR}/sub`)).toBe("only-a.txt\nstate.txt\n");
        const aaa = await fork(aa, "e-fork1-1-1");
        await runtime.release(aa, true);
        expect(await out(aaa, `cat ${WORKDIR}/sub/state.txt`)).toBe("a\n");
        siblings.push(aaa);
      } finally {
        await runtime.release(parent, true);
        for (const s of siblings) await runtime.release(s, true);
      }
    }, 300_000);

    test("nothing is left after close", async () => {
      await acquire();
      await runtime.close();
      expect(await subject.leftovers()).toEqual([]);
    }, 120_000);
  });
}
