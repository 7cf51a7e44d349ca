import { describe, expect, test } from "bun:test";
import { decodeFields, type ProtoField, readRecords } from "./read-records.ts";
import { crc32, encodeRecord, FILE_HEADER, frameRecords } from "./records.ts";

const text = (f: ProtoField | undefined) => new TextDecoder().decode(f?.bytes);
const sub = (fields: ProtoField[], n: number) => decodeFields(fields.find((f) => f.field === n)!.bytes!);

function file(records: Uint8Array[]): Uint8Array {
  const body = frameRecords(records, FILE_HEADER.length);
  const out = new Uint8Array(FILE_HEADER.length + body.length);
  out.set(FILE_HEADER);
  out.set(body, FILE_HEADER.length);
  return out;
}

describe("W&B transaction log", () => {
  test("crc32 is zlib's (IEEE): crc32('123456789') = 0xcbf43926", () => {
    expect(crc32(new TextEncoder().encode("123456789"))).toBe(0xcbf43926);
  });

  test("file header is ':W&B', magic 0xBEE1 little-endian, version 0", () => {
    expect([...FILE_HEADER]).toEqual([0x3a, 0x57, 0x26, 0x42, 0xe1, 0xbe, 0x00]);
  });

  test("records carry the wandb_internal.proto field numbers", () => {
    const run = decodeFields(
      encodeRecord(
        {
          type: "run",
          runId: "abc",
          entity: "e",
          project: "p",
          displayName: "n",
          tags: ["x", "y"],
          config: [],
          startTimeMs: 1_700_000_000_123,
        },
        1,
      ),
    );
    expect(run.find((f) => f.field === 1)!.varint).toBe(1n);
    const r = sub(run, 17);
    expect(text(r.find((f) => f.field === 1))).toBe("abc");
    expect(text(r.find((f) => f.field === 2))).toBe("e");
    expect(text(r.find((f) => f.field === 3))).toBe("p");
    expect(text(r.find((f) => f.field === 8))).toBe("n");
    expect(r.filter((f) => f.field === 10).map(text)).toEqual(["x", "y"]);
    const start = sub(r, 17);
    expect(start.find((f) => f.field === 1)!.varint).toBe(1_700_000_000n);
    expect(start.find((f) => f.field === 2)!.varint).toBe(123_000_000n);

    const history = sub(
      decodeFields(encodeRecord({ type: "history", step: 7, items: [{ key: "a/b", valueJson: "0.5" }] }, 2)),
      2,
    );
    const item = decodeFields(history.find((f) => f.field === 1)!.bytes!);
    expect(text(item.find((f) => f.field === 1))).toBe("a/b");
    expect(text(item.find((f) => f.field === 16))).toBe("0.5");
    expect(sub(history, 2).find((f) => f.field === 1)!.varint).toBe(7n);

    const exit = sub(decodeFields(encodeRecord({ type: "exit", exitCode: 1, runtimeSeconds: 12.4 }, 3)), 18);
    expect(exit.map((f) => [f.field, f.varint])).toEqual([
      [1, 1n],
      [2, 12n],
    ]);
    expect(decodeFields(encodeRecord({ type: "final" }, 4)).map((f) => f.field)).toEqual([1, 20]);
    const files = sub(decodeFields(encodeRecord({ type: "files", paths: ["media/t.json"] }, 5)), 6);
    expect(text(decodeFields(files[0]!.bytes!)[0])).toBe("media/t.json");
  });

  test("records larger than a block are split FIRST/MIDDLE/LAST and read back whole", () => {
    const big = new Uint8Array(80_000).map((_, k) => k % 251);
    const small = Uint8Array.of(1, 2, 3);
    const bytes = file([small, big, small]);
    const back = readRecords(bytes);
    expect(back).toHaveLength(3);
    expect([...back[1]!]).toEqual([...big]);
    expect([...back[2]!]).toEqual([1, 2, 3]);
    expect(bytes[FILE_HEADER.length + 7 + 3 + 6]).toBe(2);
  });

  test("a block tail shorter than a record header is zero-padded", () => {
    const fill = new Uint8Array(32768 - 7 - 7 - 3);
    const bytes = file([fill, Uint8Array.of(9)]);
    expect([...bytes.subarray(32765, 32768)]).toEqual([0, 0, 0]);
    expect(readRecords(bytes).map((r) => r.length)).toEqual([fill.length, 1]);
  });

  test("a flipped byte fails the checksum", () => {
    const bytes = file([Uint8Array.of(1, 2, 3)]);
    bytes[bytes.length - 1] = 4;
    expect(() => readRecords(bytes)).toThrow(/bad checksum/);
  });
});
