import { expect, test } from "bun:test";
import { join } from "node:path";
import { freePort } from "@air/core/testing";
import { ZmqMicroBatchSender } from "@air/trainer-prime-rl";

const PY = join(import.meta.dir, "..", "py");

/** The stand-in trainer's receiver for global `rank` of a `world`-rank trainer with context parallel `cp`. */
function receiver(port: number, rank: number, world: number, cp: number) {
  const code = `
import json, sys
from air_tiny.transport import ZmqReceiver
r = ZmqReceiver("localhost", ${port}, rank=${rank}, hwm=10, world_size=${world}, cp=${cp})
print(json.dumps({"topic": r.topic.decode()}), flush=True)
got = r.receive(1, 20000)
print(json.dumps({"received": got is not None}), flush=True)
r.close()
`;
  return Bun.spawn(["/usr/bin/python3", "-c", code], {
    env: { ...process.env, PYTHONPATH: PY },
    stdout: "pipe",
    stderr: "pipe",
  });
}

test("cp = 2: both ranks of a data-parallel group subscribe to its data rank's topic, as prime-rl's receivers", async () => {
  const port = await freePort({ count: 2 });
  const sender = await ZmqMicroBatchSender.bind({ host: "localhost", port });
  const ranks = [receiver(port, 0, 2, 2), receiver(port, 1, 2, 2)];
  try {
    await sender.waitReady(1, 30_000, undefined, 2);
    sender.send([new Uint8Array([0x90])]); // msgpack: an empty micro-batch list
    for (const p of ranks) {
      const lines = (await new Response(p.stdout).text()).trim().split("\n");
      expect(lines.map((l) => JSON.parse(l))).toEqual([{ topic: "data_rank|0|" }, { received: true }]);
    }
  } finally {
    for (const p of ranks) p.kill();
    sender.close();
  }
}, 60_000);
