import { Encoder } from "@msgpack/msgpack";

const ints = new Encoder();
const floats = new Encoder({ forceIntegerToFloat: true });

/** msgpack nil (Python's None). */
export const NIL = Uint8Array.of(0xc0);

/**
 * A msgpack array header as msgspec writes it: fixarray below 16 entries, array16, then array32.
 * @example arrayHeader(3) // Uint8Array [0x93]
 */
export function arrayHeader(length: number): Uint8Array {
  if (length < 16) return Uint8Array.of(0x90 | length);
  if (length < 0x10000) return Uint8Array.of(0xdc, length >> 8, length & 0xff);
  return Uint8Array.of(
    0xdd,
    (length >>> 24) & 0xff,
    (length >>> 16) & 0xff,
    (length >>> 8) & 0xff,
    length & 0xff,
  );
}

/**
 * Encodes ints, bools, strings or lists of them (smallest int form, as msgspec does).
 * @example encodePlain([1, 300]) // 0x92 0x01 0xcd 0x01 0x2c
 */
export function encodePlain(value: number | boolean | string | number[] | boolean[] | string[]): Uint8Array {
  return ints.encode(value);
}

/**
 * Encodes a Python `list[float]`: every entry as float64, integral ones too (msgspec never writes a float as an int).
 * @example encodeFloats([0, -1.5])
 */
export function encodeFloats(values: number[]): Uint8Array {
  return floats.encode(values);
}

/** `list[float] | None`. */
export function encodeFloatsOrNil(values: number[] | null): Uint8Array | null {
  return values === null ? null : encodeFloats(values);
}

/**
 * Concatenates encoded parts.
 * @example concat([arrayHeader(1), NIL]) // 0x91 0xc0
 */
export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/**
 * An `array_like=True, omit_defaults=True` msgspec struct: its fields in declaration order, `null` for None.
 * msgspec's array layout writes every field — `omit_defaults` only drops fields of the map layout — so a None
 * field is nil wherever it sits, trailing ones included (checked against msgspec's own output: `golden/`).
 * @example encodeStruct([encodePlain(1), null]) // 0x92 0x01 0xc0
 */
export function encodeStruct(fields: (Uint8Array | null)[]): Uint8Array[] {
  return [arrayHeader(fields.length), ...fields.map((f) => f ?? NIL)];
}
