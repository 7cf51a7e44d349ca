import { describe, expect, test } from "bun:test";
import { DockerHostsRuntime } from "@air/sandbox";
import { mlgymConfigSchema } from "./config.ts";
import { hostSpecs } from "./hosts.ts";

const base = {
  image: "img",
  user: "agent",
  workspace: "/home/agent/workspace",
  memoryMb: 4096,
  cpus: 2,
  pidsLimit: 256,
  network: "none",
  runName: "/tmp/run",
  timeoutMs: 1000,
};

describe("docker hosts config and placement room", () => {
  test("hosts: URL schemes, TLS on tcp only, TLS paths relative to the TOML", () => {
    const parse = (hosts: unknown[]) => mlgymConfigSchema.safeParse({ tasks: ["x"], docker: { hosts } });
    expect(parse([{ url: "http://x", sandboxes: 1 }]).success).toBe(false);
    expect(parse([{ url: "unix:///s", sandboxes: 0 }]).success).toBe(false);
    expect(parse([{ url: "unix:///s", sandboxes: 1, tls: { ca: "a", cert: "b", key: "c" } }]).success).toBe(
      false,
    );
    const config = mlgymConfigSchema.parse({
      tasks: ["x"],
      docker: {
        pool_size: 3,
        hosts: [
          { url: "ssh://me@box", sandboxes: 2 },
          {
            url: "tcp://10.0.0.2:2376",
            sandboxes: 8,
            gpu_ids: ["0"],
            tls: { ca: "c/ca.pem", cert: "c/cert.pem", key: "/k.pem" },
          },
        ],
      },
    });
    expect(hostSpecs(config, "/cfg")).toEqual([
      { url: "ssh://me@box", name: "ssh://me@box", sandboxes: 2, gpuIds: [], poolSize: 3 },
      {
        url: "tcp://10.0.0.2:2376",
        name: "tcp://10.0.0.2:2376",
        tls: { ca: "/cfg/c/ca.pem", cert: "/cfg/c/cert.pem", key: "/k.pem" },
        sandboxes: 8,
        gpuIds: ["0"],
        poolSize: 3,
      },
    ]);
  });

  test("a host's slots are the least of sandboxes, CPUs and memory; require_gpu needs a host with GPUs", async () => {
    const runtime = new DockerHostsRuntime(
      [
        { url: "unix:///nowhere-a.sock", name: "a", sandboxes: 10, cpus: 7, gpuIds: [], poolSize: 0 },
        { url: "unix:///nowhere-b.sock", name: "b", sandboxes: 10, memoryMb: 8192, gpuIds: [], poolSize: 0 },
        { url: "unix:///nowhere-c.sock", name: "c", sandboxes: 4, gpuIds: [], poolSize: 0 },
      ],
      { base, requireGpu: false, probeMs: 3_600_000 },
    );
    expect(runtime.hosts.map((h) => h.slots)).toEqual([3, 2, 4]);
    await runtime.close();
    expect(
      () =>
        new DockerHostsRuntime(
          [{ url: "unix:///nowhere.sock", name: "a", sandboxes: 1, gpuIds: [], poolSize: 0 }],
          {
            base,
            requireGpu: true,
            probeMs: 1000,
          },
        ),
    ).toThrow("no docker host has gpu_ids");
  });
});
