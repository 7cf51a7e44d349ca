import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@air/core/testing";
import { encodeMicroBatches } from "../micro-batch.ts";
import { packSamples } from "../pack.ts";
import plugin from "../plugin.ts";
import { testContext, testSample } from "../testing.ts";
import { toTrainingSample } from "../wire.ts";
import { ZmqMicroBatchSender } from "./sender.ts";

// A real libzmq peer (Debian's python3-zmq) doing what prime-rl's ZMQMicroBatchReceiver does: SUB connect,
// subscribe to data_rank|R|, PUSH connect to port + 1 and send the rank (READY), then receive one step and
// print what msgpack decodes.
const PEER = `
import json, sys, zmq, msgpack
host, port, rank = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ctx = zmq.Context.instance()
sub = ctx.socket(zmq.SUB)
sub.setsockopt(zmq.RCVHWM, 10)
sub.connect(f"tcp://{host}:{port}")
topic = b"data_rank|" + str(rank).encode() + b"|"
sub.setsockopt(zmq.SUBSCRIBE, topic)
ready = ctx.socket(zmq.PUSH)
ready.connect(f"tcp://{host}:{port + 1}")
ready.send(str(rank).encode())
if not sub.poll(15000):
    print(json.dumps({"error": "nothing received"})); sys.exit(1)
got_topic, payload = sub.recv_multipart()
batches = msgpack.unpackb(payload, raw=False)
print(json.dumps({"topic": got_topic.decode(), "bytes": len(payload), "micro_batches": len(batches),
                  "input_ids": [b[0] for b in batches], "mask_types": sorted({type(m).__name__ for b in batches for m in b[1]})}))
sub.close(0); ready.close(0)
`;

const dir = mkdtempSync(join(tmpdir(), "air-zmq-"));
const script = join(dir, "peer.py");
writeFileSync(script, PEER);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function peer(port: number, rank: number) {
  return Bun.spawn(["/usr/bin/python3", script, "localhost", String(port), String(rank)], {
    stdout: "pipe",
    stderr: "pipe",
  });
}

describe("ZMQ transport against libzmq (pyzmq) peers", () => {
  test("two trainer ranks: READY barrier, each rank gets only its own micro batches", async () => {
    const port = await freePort({ count: 2 });
    const sender = await ZmqMicroBatchSender.bind({ host: "localhost", port });
    const peers = [peer(port, 0), peer(port, 1)];
    try {
      await sender.waitReady(2, 20_000);
      const samples = [
        testSample([1, 2, 3], [300, 301], [-1, -0.5], 1),
        testSample([4], [302, 303, 304], [-2, -1, -0.25], -1),
        testSample([5, 6], [305], [-0.1], 0.5),
      ].map((s) => toTrainingSample(s, "air"));
      const grid = packSamples(samples, { seqLen: 8, dataWorldSize: 2 });
      const payloads = grid.map(encodeMicroBatches);
      sender.send(payloads);
      const outputs = await Promise.all(
        peers.map(async (p) => {
          const timer = setTimeout(() => p.kill(), 20_000);
          const out = await new Response(p.stdout).text();
          const err = await new Response(p.stderr).text();
          await p.exited;
          clearTimeout(timer);
          if (p.exitCode !== 0) throw new Error(`peer failed: ${out} ${err}`);
          return JSON.parse(out) as {
            topic: string;
            bytes: number;
            micro_batches: number;
            input_ids: number[][];
            mask_types: string[];
          };
        }),
      );
      outputs.forEach((o, rank) => {
        expect(o.topic).toBe(`data_rank|${rank}|`);
        expect(o.bytes).toBe(payloads[rank]?.length ?? -1);
        expect(o.micro_batches).toBe(grid[rank]?.length ?? -1);
        expect(o.input_ids).toEqual((grid[rank] ?? []).map((m) => m.input_ids));
        expect(o.mask_types).toEqual(["bool"]);
      });
    } finally {
      for (const p of peers) p.kill();
      sender.close();
    }
  }, 40_000);

  test("context parallel 2: both cp ranks read data rank 0's topic; a late one is waited for, none hangs", async () => {
    const port = await freePort({ count: 2 });
    const sender = await ZmqMicroBatchSender.bind({ host: "localhost", port });
    const early = peer(port, 0);
    let late: ReturnType<typeof peer> | undefined;
    try {
      let bothReady = false;
      const waiting = sender.waitReady(1, 30_000, undefined, 2).then(() => {
        bothReady = true;
      });
      // The early reader is counted (one reader is enough for cp = 1) ...
      await sender.waitReady(1, 30_000);
      await Bun.sleep(0);
      // ... but with cp = 2 the step is not published until the second reader of the topic joins.
      expect(bothReady).toBe(false);
      late = peer(port, 0);
      await waiting;
      const payload = encodeMicroBatches(
        packSamples([toTrainingSample(testSample([1, 2], [300], [-1], 1), "air")], {
          seqLen: 8,
          dataWorldSize: 1,
        })[0] ?? [],
      );
      sender.send([payload]);
      for (const p of [early, late]) {
        const timer = setTimeout(() => p.kill(), 20_000);
        const out = await new Response(p.stdout).text();
        await p.exited;
        clearTimeout(timer);
        expect(JSON.parse(out)).toMatchObject({ topic: "data_rank|0|", bytes: payload.length });
      }
    } finally {
      early.kill();
      late?.kill();
      sender.close();
    }
  }, 60_000);

  test("a rank that never joins: a timeout naming the endpoint and the missing rank", async () => {
    const port = await freePort({ count: 2 });
    const sender = await ZmqMicroBatchSender.bind({ host: "localhost", port });
    try {
      await expect(sender.waitReady(1, 300)).rejects.toThrow(
        new RegExp(
          `rank\\(s\\) 0 did not subscribe to tcp://localhost:${port} and send READY to port ${port + 1}`,
        ),
      );
      expect(() => sender.send([new Uint8Array([0x90])])).toThrow(/no trainer rank 0 is subscribed/);
    } finally {
      sender.close();
    }
  });

  test("a taken port fails at bind with the address", async () => {
    const port = await freePort({ count: 2 });
    const first = await ZmqMicroBatchSender.bind({ host: "localhost", port });
    try {
      await expect(ZmqMicroBatchSender.bind({ host: "localhost", port })).rejects.toThrow(
        new RegExp(`cannot bind prime-rl's ZMQ transport on tcp://localhost:${port}`),
      );
    } finally {
      first.close();
    }
  });

  test("the plugin over ZMQ: the trainer rank gets the step, STABLE gives the weights", async () => {
    const port = await freePort({ count: 2 });
    const ctx = testContext();
    const trainer = await plugin.create(
      plugin.configSchema.parse({ transport: "zmq", zmq_port: port, poll_ms: 10, metrics_wait_ms: 0 }),
      ctx,
    );
    const p = peer(port, 0);
    try {
      const samples = [testSample([1, 2], [300, 301], [-1, -0.5], 1)];
      await trainer.submit({ schemaVersion: 1, step: 0, samples, metrics: {} });
      const timer = setTimeout(() => p.kill(), 20_000);
      const out = JSON.parse(await new Response(p.stdout).text()) as { topic: string; input_ids: number[][] };
      clearTimeout(timer);
      expect(out.topic).toBe("data_rank|0|");
      expect(out.input_ids).toEqual([[1, 2, 300, 301]]);
      const runDir = join(ctx.runDir, "prime-rl");
      expect(readdirSync(runDir)).not.toContain("rollouts");
      mkdirSync(join(runDir, "broadcasts", "step_1"), { recursive: true });
      writeFileSync(join(runDir, "broadcasts", "step_1", "STABLE"), "");
      expect((await trainer.waitForWeights(0, AbortSignal.timeout(2_000)))?.version).toBe(1);
    } finally {
      p.kill();
      await trainer.close?.();
      rmSync(ctx.runDir, { recursive: true, force: true });
    }
  }, 40_000);
});
