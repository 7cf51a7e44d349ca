import type { Socket } from "node:net";

/**
 * The ZMTP 3.0 wire protocol (rfc.zeromq.org/spec/23), NULL security, as much as a PUB and a PULL socket need
 * to talk to libzmq peers (prime-rl's pyzmq trainer ranks). npm `zeromq` cannot load under Bun (its native
 * addon calls libuv's `uv_poll_init_socket`, which Bun does not provide), so air speaks the protocol itself.
 */

const FLAG_MORE = 0x01;
const FLAG_LONG = 0x02;
const FLAG_COMMAND = 0x04;

/**
 * The 64-byte greeting: signature, version 3.0, mechanism NULL, as-server 0. We announce 3.0, so a libzmq SUB
 * sends subscriptions as `0x01 + topic` messages (3.1 peers may also send SUBSCRIBE commands; both are read).
 */
export function greeting(): Uint8Array {
  const g = new Uint8Array(64);
  g[0] = 0xff;
  g[8] = 0x01;
  g[9] = 0x7f;
  g[10] = 3;
  g[11] = 0;
  g.set(new TextEncoder().encode("NULL"), 12);
  return g;
}

/** One frame: flags, size (1 or 8 bytes), body. */
export function frame(body: Uint8Array, flags: { more?: boolean; command?: boolean } = {}): Uint8Array {
  const long = body.length > 255;
  const head = new Uint8Array(long ? 9 : 2);
  head[0] = (flags.more ? FLAG_MORE : 0) | (long ? FLAG_LONG : 0) | (flags.command ? FLAG_COMMAND : 0);
  if (long) new DataView(head.buffer).setBigUint64(1, BigInt(body.length));
  else head[1] = body.length;
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

/** The READY command announcing our socket type (`PUB`, `PULL`, ...). */
export function readyCommand(socketType: string): Uint8Array {
  const enc = new TextEncoder();
  const name = enc.encode("Socket-Type");
  const value = enc.encode(socketType);
  const body = new Uint8Array(1 + 5 + 1 + name.length + 4 + value.length);
  let o = 0;
  body[o++] = 5;
  body.set(enc.encode("READY"), o);
  o += 5;
  body[o++] = name.length;
  body.set(name, o);
  o += name.length;
  new DataView(body.buffer).setUint32(o, value.length);
  o += 4;
  body.set(value, o);
  return frame(body, { command: true });
}

/** What a peer sent, as it completes. */
export interface PeerEvents {
  /** A complete message (all its frames). */
  message(frames: Uint8Array[]): void;
  /** A command other than READY (e.g. SUBSCRIBE / CANCEL from a ZMTP 3.1 SUB): name and data. */
  command?(name: string, data: Uint8Array): void;
  /** The peer's READY metadata (Socket-Type, ...). */
  ready?(properties: Record<string, string>): void;
  /** A protocol error; the connection is closed. */
  error?(error: Error): void;
}

function parseProperties(body: Uint8Array, offset: number): Record<string, string> {
  const out: Record<string, string> = {};
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const dec = new TextDecoder();
  let o = offset;
  while (o < body.length) {
    const nameLength = body[o++] ?? 0;
    const name = dec.decode(body.subarray(o, o + nameLength));
    o += nameLength;
    const valueLength = view.getUint32(o);
    o += 4;
    out[name] = dec.decode(body.subarray(o, o + valueLength));
    o += valueLength;
  }
  return out;
}

/**
 * Runs the ZMTP handshake on an accepted TCP connection as a `socketType` socket and reports what the peer
 * sends. Returns a function that writes a multipart message.
 * @example const send = attachZmtp(socket, "PUB", { message: (frames) => {} }); send([topic, payload]);
 */
export function attachZmtp(
  socket: Socket,
  socketType: string,
  events: PeerEvents,
): (frames: Uint8Array[]) => void {
  socket.setNoDelay(true);
  socket.write(greeting());
  socket.write(readyCommand(socketType));
  let buffer: Uint8Array = new Uint8Array(0);
  let greeted = false;
  let parts: Uint8Array[] = [];
  const fail = (error: Error) => {
    events.error?.(error);
    socket.destroy();
  };
  socket.on("data", (chunk: Uint8Array) => {
    const joined = new Uint8Array(buffer.length + chunk.length);
    joined.set(buffer);
    joined.set(chunk, buffer.length);
    buffer = joined;
    if (!greeted) {
      if (buffer.length < 64) return;
      if (buffer[0] !== 0xff || buffer[9] !== 0x7f || (buffer[10] ?? 0) < 3)
        return fail(new Error("the peer does not speak ZMTP 3"));
      const mechanism = new TextDecoder().decode(buffer.subarray(12, 32)).replace(/\0+$/, "");
      if (mechanism !== "NULL") return fail(new Error(`the peer wants security mechanism ${mechanism}`));
      greeted = true;
      buffer = buffer.subarray(64);
    }
    for (;;) {
      if (buffer.length < 2) return;
      const flags = buffer[0] ?? 0;
      const long = (flags & FLAG_LONG) !== 0;
      const headLength = long ? 9 : 2;
      if (buffer.length < headLength) return;
      const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
      const size = long ? Number(view.getBigUint64(1)) : (buffer[1] ?? 0);
      if (buffer.length < headLength + size) return;
      const body = buffer.slice(headLength, headLength + size);
      buffer = buffer.subarray(headLength + size);
      if (flags & FLAG_COMMAND) {
        const nameLength = body[0] ?? 0;
        const name = new TextDecoder().decode(body.subarray(1, 1 + nameLength));
        if (name === "READY") events.ready?.(parseProperties(body, 1 + nameLength));
        else if (name === "ERROR")
          return fail(new Error(`peer error: ${new TextDecoder().decode(body.subarray(7))}`));
        else events.command?.(name, body.subarray(1 + nameLength));
        continue;
      }
      parts.push(body);
      if (!(flags & FLAG_MORE)) {
        const message = parts;
        parts = [];
        events.message(message);
      }
    }
  });
  return (frames) => {
    frames.forEach((f, i) => {
      socket.write(frame(f, { more: i < frames.length - 1 }));
    });
  };
}
