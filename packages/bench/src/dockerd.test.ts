import { expect, test } from "bun:test";
import Docker from "dockerode";
import { engineAnswers } from "./dockerd.ts";

test("engineAnswers: the machine's engine answers; a port nothing listens on does not, within its bound", async () => {
  const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = closed.port;
  closed.stop(true);
  expect(await engineAnswers(new Docker({ host: "127.0.0.1", port, protocol: "http" }), 5000)).toBe(false);
  // A server that accepts and never answers: the bound decides.
  const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  try {
    expect(
      await engineAnswers(new Docker({ host: "127.0.0.1", port: silent.port, protocol: "http" }), 300),
    ).toBe(false);
  } finally {
    silent.stop(true);
  }
  if (Bun.spawnSync(["docker", "info"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0)
    expect(await engineAnswers(new Docker(), 30_000)).toBe(true);
}, 120_000);
