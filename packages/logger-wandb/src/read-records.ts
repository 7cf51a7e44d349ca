import { crc32, FILE_HEADER } from "./records.ts";

/** One protobuf field: its number and either a varint or the raw bytes of a length-delimited field. */
export interface ProtoField {
  field: number;
  varint?: bigint;
  bytes?: Uint8Array;
}

/**
 * Splits a protobuf message into its fields (wire types 0, 1, 2 and 5), without a schema.
 * @example decodeFields(bytes).find((f) => f.field === 17) // the RunRecord of a Record
 */
export function decodeFields(data: Uint8Array): ProtoField[] {
  const fields: ProtoField[] = [];
  let i = 0;
  const varint = () => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = data[i++];
      if (b === undefined) throw new Error("truncated varint");
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (i < data.length) {
    const key = Number(varint());
    const field = key >> 3;
    const wire = key & 7;
    if (wire === 0) fields.push({ field, varint: varint() });
    else if (wire === 2) {
      const length = Number(varint());
      fields.push({ field, bytes: data.subarray(i, i + length) });
      i += length;
    } else if (wire === 1 || wire === 5) {
      const length = wire === 1 ? 8 : 4;
      fields.push({ field, bytes: data.subarray(i, i + length) });
      i += length;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return fields;
}

/**
 * Reads the records of a `.wandb` transaction log: checks the file header and every record's CRC, joins
 * FIRST/MIDDLE/LAST fragments, and returns each serialized `Record`.
 * @example const records = readRecords(readFileSync("run-abc.wandb"));
 */
export function readRecords(file: Uint8Array): Uint8Array[] {
  if (!FILE_HEADER.every((b, k) => file[k] === b)) throw new Error("not a W&B transaction log (bad header)");
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const out: Uint8Array[] = [];
  let index = FILE_HEADER.length;
  let pending: number[] | undefined;
  while (index < file.length) {
    const left = 32768 - (index % 32768);
    if (left < 7) {
      index += left;
      continue;
    }
    if (index + 7 > file.length) throw new Error(`truncated record header at ${index}`);
    const checksum = view.getUint32(index, true);
    const length = view.getUint16(index + 4, true);
    const type = view.getUint8(index + 6);
    const data = file.subarray(index + 7, index + 7 + length);
    if (crc32(data, crc32(Uint8Array.of(type))) !== checksum) throw new Error(`bad checksum at ${index}`);
    index += 7 + length;
    if (type === 1) out.push(data);
    else if (type === 2) pending = [...data];
    else if (type === 3 && pending) pending.push(...data);
    else if (type === 4 && pending) {
      pending.push(...data);
      out.push(Uint8Array.from(pending));
      pending = undefined;
    } else throw new Error(`unexpected record type ${type} at ${index}`);
  }
  return out;
}
