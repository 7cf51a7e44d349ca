import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapArgv, SANDBOX_WORKSPACE } from "./bwrap.ts";
import { runProcess } from "./process.ts";

describe("local runtime (bwrap): nothing outlives air", () => {
  test("SIGKILL of the process that owns a sandbox kills every process in it, setsid or not", async () => {
    const dir = mkdtempSync(join(tmpdir(), "air-holder-"));
    const marker = `9${process.pid}.${Date.now() % 1000}`;
    const count = async () =>
      (
        await runProcess(["pgrep", "-c", "-f", `sleep ${marker}`], { cwd: "/", timeoutMs: 10_000 })
      ).stdout.trim();
    const holder = Bun.spawn(["bun", join(import.meta.dir, "testing", "sandbox-holder.ts"), dir, marker], {
      stdout: "pipe",
      stderr: "inherit",
    });
    try {
      const reader = holder.stdout.getReader();
      const first = await Promise.race([reader.read(), Bun.sleep(30_000).then(() => undefined)]);
      expect(new TextDecoder().decode(first?.value)).toContain("ready");
      expect(await count()).toBe("2");
      holder.kill("SIGKILL");
      await holder.exited;
      let left = await count();
      // the kernel reaps the sandbox's processes once its owner is gone: within ms idle, seconds under load
      for (const deadline = Date.now() + 60_000; left !== "0" && Date.now() < deadline; ) {
        await Bun.sleep(100);
        left = await count();
      }
      expect(left).toBe("0");
    } finally {
      holder.kill("SIGKILL");
      await runProcess(["pkill", "-KILL", "-f", `sleep ${marker}`], { cwd: "/", timeoutMs: 10_000 });
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("local runtime (bwrap): as an unprivileged user (user namespace)", () => {
  const asRoot = process.getuid?.() === 0;
  const probe = join(import.meta.dir, "testing", "userns-probe.ts");
  // nobody must be able to read the checkout (a clone in a private directory is not).
  const readable =
    asRoot &&
    Bun.spawnSync(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "test", "-r", probe])
      .exitCode === 0;
  if (asRoot && !readable) console.warn(`skipping the user-namespace test: nobody cannot read ${probe}`);
  // Without root the other tests already run this mode; as root, run it as nobody.
  test.skipIf(!readable)(
    "a sandbox, an evaluation, a fork and a stored snapshot work without root",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "air-userns-"));
      try {
        await runProcess(["chown", "65534:65534", dir], { cwd: "/", timeoutMs: 10_000 });
        const argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", `HOME=${dir}`];
        const out = await runProcess([...argv, process.execPath, probe, dir], {
          cwd: dir,
          timeoutMs: 60_000,
        });
        expect(out.stderr).toBe("");
        const result = JSON.parse(out.stdout.trim().split("\n").at(-1) as string);
        expect(result.id).toBe(`agent\n${SANDBOX_WORKSPACE}\n`);
        expect(result.readOnly).toBe("1\n");
        expect(result.write).toBe("hi\n");
        expect(result.net).toBe("1\n");
        expect(Number(result.procs)).toBeLessThan(6);
        expect(result.fork).toBe("hi\na\n1\ndata\nmine.txt\n");
        expect(result.restored).toBe("t\nhi\n640 agent\n");
        expect(JSON.parse(result.evaluation)).toEqual({
          files: ["data", "evaluate.py", "mine.txt"],
          cwd: SANDBOX_WORKSPACE,
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    90_000,
  );
});

describe("local runtime (bwrap): shared read-only paths", () => {
  test("bwrap mounts each shared path read-only from the bundle over the workspace's placeholder", () => {
    const argv = bwrapArgv({
      workspace: "/srv/ws",
      shared: [{ src: "/run/tasks/t/workspace/data", path: "data" }],
      python: "/usr/bin/python3",
      identity: { kind: "userns" },
      maxProcesses: 64,
      memoryMb: 512,
      command: ["bash"],
    }).join(" ");
    expect(argv).toContain(`--ro-bind /run/tasks/t/workspace/data ${SANDBOX_WORKSPACE}/data`);
    // after the workspace's own bind, so that it lies over it
    expect(argv.indexOf(`${SANDBOX_WORKSPACE}/data`)).toBeGreaterThan(
      argv.indexOf(`--bind /srv/ws ${SANDBOX_WORKSPACE}`),
    );
  });
});
