import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { CKPT_COMPLETE_MARKER } from "./checkpoints.ts";

// What `checkpointComplete` relies on, checked against torch's own torch.distributed.checkpoint (the Debian sid
// root's torch 2.x, which scripts/build-torch-root builds and CI has; run through scripts/torchrun-sid, as the
// GPU configs' CPU runs are): a save writes its payload first and `.metadata` last, and a directory without
// `.metadata` does not load. The CPU stand-in's checkpoint has the same files.
const REPO_ROOT = join(import.meta.dir, "..", "..", "..");
const TORCHRUN_SID = join(REPO_ROOT, "scripts", "torchrun-sid");
const SID_ROOT = process.env.AIR_TORCH_ROOT ?? join(homedir(), ".cache", "air", "torch-root", "current");
const work = mkdtempSync(join(tmpdir(), "air-dcp-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

test.skipIf(!existsSync(join(SID_ROOT, ".air-built")))(
  "torch's DCP writes .metadata after the payload and cannot load without it; the stand-in writes the same files",
  async () => {
    const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = server.port;
    server.stop(true);
    const proc = Bun.spawn(
      [
        TORCHRUN_SID,
        `--rdzv-endpoint=127.0.0.1:${port}`,
        "--nnodes=1",
        "--nproc-per-node=1",
        join(import.meta.dir, "fixtures", "dcp_order.py"),
        work,
      ],
      { env: { ...process.env, PYTHONPATH: join(REPO_ROOT, "packages", "tiny", "py") }, stderr: "pipe" },
    );
    const code = await Promise.race([proc.exited, Bun.sleep(240_000).then(() => "hung")]);
    const stdout = await new Response(proc.stdout).text();
    expect(code, await new Response(proc.stderr).text()).toBe(0);
    const seen = JSON.parse(stdout.split("\n").find((l) => l.startsWith("{")) ?? "{}") as Record<
      string,
      string | string[]
    >;
    expect(seen.before_finish).toEqual(["__0_0.distcp"]);
    expect(seen.after).toEqual([CKPT_COMPLETE_MARKER, "__0_0.distcp"]);
    expect(seen.load_without_metadata).toContain(
      `No such file or directory: '${join(work, "real", CKPT_COMPLETE_MARKER)}'`,
    );
    expect(seen.stand_in).toEqual(seen.after);
  },
  300_000,
);
