/**
 * The transaction log of an offline W&B run (`run-<id>.wandb`): protobuf `Record` messages of
 * `wandb/proto/wandb_internal.proto`, framed as a LevelDB log (32 KiB blocks, 7-byte record headers).
 *
 * Read from wandb/wandb at b6e29505884ea60c79ca12091f1f75bd39d2f955: field numbers from wandb_internal.proto
 * (Record, RunRecord, HistoryRecord, SummaryRecord, ConfigRecord, FilesRecord, RunExitRecord, HeaderRecord,
 * FinalRecord, FooterRecord),
 * framing from wandb/sdk/internal/datastore.py (file header ":W&B" + magic 0xBEE1 + version 0; record header
 * = IEEE CRC-32 of type byte and data, uint16 length, uint8 type; FULL=1 FIRST=2 MIDDLE=3 LAST=4).
 */

const BLOCK_LEN = 32768;
const HEADER_LEN = 7;
export const FILE_HEADER = new Uint8Array([0x3a, 0x57, 0x26, 0x42, 0xe1, 0xbe, 0x00]);
const FULL = 1;
const FIRST = 2;
const MIDDLE = 3;
const LAST = 4;

/** One key of a history, summary or config record; the value is JSON text. */
export interface RecordItem {
  key: string;
  valueJson: string;
}

/** The records an air run writes. */
export type WandbRecord =
  | { type: "header"; producer: string }
  | {
      type: "run";
      runId: string;
      entity: string;
      project: string;
      displayName: string;
      tags: string[];
      config: RecordItem[];
      startTimeMs: number;
    }
  | { type: "config"; update: RecordItem[] }
  | { type: "history"; step: number; items: RecordItem[] }
  | { type: "summary"; update: RecordItem[] }
  | { type: "files"; paths: string[] }
  | { type: "exit"; exitCode: number; runtimeSeconds: number }
  | { type: "final" }
  | { type: "footer" };

/** Protobuf wire-format writer (varints, length-delimited fields), enough for the messages above. */
class Proto {
  private readonly bytes: number[] = [];

  private varint(value: number): void {
    let v = BigInt.asUintN(64, BigInt(Math.trunc(value)));
    while (v >= 0x80n) {
      this.bytes.push(Number((v & 0x7fn) | 0x80n));
      v >>= 7n;
    }
    this.bytes.push(Number(v));
  }

  int(field: number, value: number): this {
    if (value === 0) return this;
    this.varint(field * 8);
    this.varint(value);
    return this;
  }

  bytesField(field: number, data: Uint8Array, always = false): this {
    if (data.length === 0 && !always) return this;
    this.varint(field * 8 + 2);
    this.varint(data.length);
    for (const b of data) this.bytes.push(b);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytesField(field, new TextEncoder().encode(value));
  }

  message(field: number, inner: Proto): this {
    return this.bytesField(field, inner.done(), true);
  }

  done(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }
}

function items(field: number, list: RecordItem[], out: Proto): Proto {
  for (const item of list) out.message(field, new Proto().string(1, item.key).string(16, item.valueJson));
  return out;
}

/**
 * Encodes one record as a serialized `Record` message (`num` is the record's sequence number).
 * @example encodeRecord({ type: "history", step: 0, items: [{ key: "reward/mean", valueJson: "0.5" }] }, 1)
 */
export function encodeRecord(record: WandbRecord, num: number): Uint8Array {
  const outer = new Proto().int(1, num);
  switch (record.type) {
    case "header":
      outer.message(21, new Proto().message(1, new Proto().string(1, record.producer)));
      break;
    case "run": {
      const run = new Proto()
        .string(1, record.runId)
        .string(2, record.entity)
        .string(3, record.project)
        .message(4, items(1, record.config, new Proto()))
        .string(8, record.displayName);
      for (const tag of record.tags) run.string(10, tag);
      const seconds = Math.floor(record.startTimeMs / 1000);
      run.message(17, new Proto().int(1, seconds).int(2, (record.startTimeMs % 1000) * 1_000_000));
      outer.message(17, run);
      break;
    }
    case "config":
      outer.message(5, items(1, record.update, new Proto()));
      break;
    case "history":
      outer.message(2, items(1, record.items, new Proto()).message(2, new Proto().int(1, record.step)));
      break;
    case "summary":
      outer.message(3, items(1, record.update, new Proto()));
      break;
    case "files": {
      const files = new Proto();
      for (const path of record.paths) files.message(1, new Proto().string(1, path));
      outer.message(6, files);
      break;
    }
    case "exit":
      outer.message(18, new Proto().int(1, record.exitCode).int(2, Math.round(record.runtimeSeconds)));
      break;
    case "final":
      outer.message(20, new Proto());
      break;
    case "footer":
      outer.message(22, new Proto());
      break;
  }
  return outer.done();
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** IEEE CRC-32 (zlib's `crc32`), the checksum W&B's datastore uses. */
export function crc32(data: Uint8Array, start = 0): number {
  let c = ~start >>> 0;
  for (const b of data) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/**
 * Frames serialized records as a LevelDB log that starts at byte `offset` of the file (after the file header
 * the first call gets `offset = 7`). Returns the bytes to append.
 * @example const bytes = frameRecords([encodeRecord(r, 1)], FILE_HEADER.length);
 */
export function frameRecords(payloads: Uint8Array[], offset: number): Uint8Array {
  const out: number[] = [];
  let index = offset;
  const write = (data: Uint8Array, type: number) => {
    const head = new DataView(new ArrayBuffer(HEADER_LEN));
    head.setUint32(0, crc32(data, crc32(Uint8Array.of(type))), true);
    head.setUint16(4, data.length, true);
    head.setUint8(6, type);
    for (const b of new Uint8Array(head.buffer)) out.push(b);
    for (const b of data) out.push(b);
    index += HEADER_LEN + data.length;
  };
  for (const data of payloads) {
    let spaceLeft = BLOCK_LEN - (index % BLOCK_LEN);
    if (spaceLeft < HEADER_LEN) {
      for (let i = 0; i < spaceLeft; i++) out.push(0);
      index += spaceLeft;
      spaceLeft = BLOCK_LEN;
    }
    if (data.length + HEADER_LEN <= spaceLeft) {
      write(data, FULL);
      continue;
    }
    let used = spaceLeft - HEADER_LEN;
    write(data.subarray(0, used), FIRST);
    while (data.length - used > BLOCK_LEN - HEADER_LEN) {
      write(data.subarray(used, used + BLOCK_LEN - HEADER_LEN), MIDDLE);
      used += BLOCK_LEN - HEADER_LEN;
    }
    write(data.subarray(used), LAST);
  }
  return Uint8Array.from(out);
}
