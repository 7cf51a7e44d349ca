import { createServer, type Server, type Socket } from "node:net";
import { AirError, sleep } from "@air/core";
import { attachZmtp } from "./zmtp.ts";

/** Where prime-rl's ZMQ rollout transport meets (`ZMQTransportConfig`: host, port; READY on port + 1). */
export interface ZmqEndpoint {
  host: string;
  port: number;
}

interface Subscriber {
  socket: Socket;
  topics: Uint8Array[];
  send: (frames: Uint8Array[]) => void;
}

const enc = new TextEncoder();

/** The topic of a data rank's frames: `data_rank|<R>|` (prime-rl's `ZMQMicroBatchSender`). */
export function rankTopic(rank: number): Uint8Array {
  return enc.encode(`data_rank|${rank}|`);
}

function startsWith(data: Uint8Array, prefix: Uint8Array): boolean {
  if (prefix.length > data.length) return false;
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false;
  return true;
}

function listenHost(host: string): string {
  // libzmq resolves "localhost" to IPv4 by default (ZMQ_IPV6 off); "*" is every interface.
  if (host === "localhost") return "127.0.0.1";
  if (host === "*") return "0.0.0.0";
  return host;
}

async function listen(server: Server, host: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, listenHost(host), () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/**
 * The orchestrator side of prime-rl's ZMQ rollout transport: a PUB socket bound on `tcp://host:port` that
 * publishes `[data_rank|R|, list[MicroBatch]]` to each trainer rank, and a PULL socket on `port + 1` where each
 * rank announces itself (its rank number as text) once it has subscribed — the READY barrier.
 * @example const sender = await ZmqMicroBatchSender.bind({ host: "localhost", port: 5555 });
 * await sender.waitReady(2, 60_000); sender.send([bytesRank0, bytesRank1]); sender.close();
 */
export class ZmqMicroBatchSender {
  private readonly subscribers = new Set<Subscriber>();
  /** The rank each live READY connection announced (prime-rl's receiver keeps its PUSH socket open). */
  private readonly readyConnections = new Map<Socket, number>();
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly endpoint: ZmqEndpoint,
    private readonly pub: Server,
    private readonly pull: Server,
  ) {}

  /** Binds the PUB and READY sockets; fails with the address when a port is taken. */
  static async bind(endpoint: ZmqEndpoint): Promise<ZmqMicroBatchSender> {
    const pub = createServer();
    const pull = createServer();
    const sender = new ZmqMicroBatchSender(endpoint, pub, pull);
    pub.on("connection", (socket) => sender.acceptSubscriber(socket));
    pull.on("connection", (socket) => sender.acceptReady(socket));
    try {
      await listen(pub, endpoint.host, endpoint.port);
      await listen(pull, endpoint.host, endpoint.port + 1);
    } catch (error) {
      sender.close();
      throw new AirError(
        "TRAINER_FAILED",
        `cannot bind prime-rl's ZMQ transport on tcp://${endpoint.host}:${endpoint.port} (+1 for READY): ${String(error)}`,
      );
    }
    return sender;
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  }

  private acceptSubscriber(socket: Socket): void {
    this.track(socket);
    const sub: Subscriber = { socket, topics: [], send: () => {} };
    const subscribe = (topic: Uint8Array, on: boolean) => {
      sub.topics = sub.topics.filter((t) => Buffer.compare(Buffer.from(t), Buffer.from(topic)) !== 0);
      if (on) sub.topics.push(topic);
    };
    sub.send = attachZmtp(socket, "PUB", {
      // ZMTP 3.0 subscriptions: a message whose first byte is 1 (subscribe) or 0 (cancel), then the topic.
      message: ([body]) => {
        if (body && body.length > 0 && (body[0] === 1 || body[0] === 0))
          subscribe(body.slice(1), body[0] === 1);
      },
      command: (name, data) => {
        if (name === "SUBSCRIBE" || name === "CANCEL") subscribe(data.slice(), name === "SUBSCRIBE");
      },
    });
    this.subscribers.add(sub);
    socket.on("close", () => this.subscribers.delete(sub));
  }

  private acceptReady(socket: Socket): void {
    this.track(socket);
    attachZmtp(socket, "PULL", {
      message: ([body]) => {
        const rank = Number.parseInt(new TextDecoder().decode(body ?? new Uint8Array()), 10);
        if (Number.isInteger(rank) && rank >= 0) this.readyConnections.set(socket, rank);
      },
    });
    socket.on("close", () => this.readyConnections.delete(socket));
  }

  /** Live subscriptions to a data rank's topic. */
  private subscribed(rank: number): number {
    const topic = rankTopic(rank);
    let n = 0;
    for (const s of this.subscribers) if (s.topics.some((t) => startsWith(topic, t))) n++;
    return n;
  }

  /** Live READY connections that announced a data rank. */
  private ready(rank: number): number {
    let n = 0;
    for (const r of this.readyConnections.values()) if (r === rank) n++;
    return n;
  }

  /**
   * Waits until each data rank 0..n-1 has `readers` live READY connections and as many subscriptions. With
   * context parallel > 1, prime-rl's trainer makes one receiver per rank, all `cp` ranks of a data-parallel
   * group on the topic of their data rank (trainer/rl/data.py: `dp_rank = rank // non_dp_world_size`); each
   * sends READY once and keeps its PUSH socket open. prime-rl's own sender counts a data rank ready after its
   * first READY, so a late cp rank misses the first publish and waits forever; counting every reader closes that.
   * A subscription travels on another connection than READY, so both are waited for.
   */
  async waitReady(ranks: number, timeoutMs: number, signal?: AbortSignal, readers = 1): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const missing = Array.from({ length: ranks }, (_, r) => r).filter(
        (r) => this.ready(r) < readers || this.subscribed(r) < readers,
      );
      if (missing.length === 0) return;
      if (signal?.aborted) throw new AirError("ABORTED", "aborted while waiting for trainer ranks over ZMQ");
      if (Date.now() >= deadline)
        throw new AirError(
          "TIMEOUT",
          `${readers > 1 ? `${readers} readers (cp) of ` : ""}trainer data rank(s) ${missing.join(", ")} did not subscribe to tcp://${this.endpoint.host}:${this.endpoint.port} ` +
            `and send READY to port ${this.endpoint.port + 1} within ${timeoutMs} ms`,
        );
      await sleep(20, signal);
    }
  }

  /**
   * Publishes one step: `payloads[R]` to rank R. Throws when a rank has no subscriber (PUB would drop it).
   */
  send(payloads: Uint8Array[]): void {
    payloads.forEach((payload, rank) => {
      const topic = rankTopic(rank);
      let delivered = 0;
      for (const s of this.subscribers) {
        if (!s.topics.some((t) => startsWith(topic, t))) continue;
        s.send([topic, payload]);
        delivered++;
      }
      if (delivered === 0)
        throw new AirError(
          "TRAINER_FAILED",
          `no trainer rank ${rank} is subscribed to tcp://${this.endpoint.host}:${this.endpoint.port}: the batch would be dropped`,
        );
    });
  }

  /** Closes both sockets and every connection. */
  close(): void {
    for (const s of this.sockets) s.destroy();
    this.pub.close();
    this.pull.close();
  }
}
