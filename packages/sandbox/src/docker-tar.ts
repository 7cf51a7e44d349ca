/** One member of a tar archive as {@link readTar} returns it (names as stored, never resolved). */
export interface TarEntry {
  name: string;
  /** "file", "dir", "symlink", "hardlink", or "other" (fifos, devices: never stored). */
  type: "file" | "dir" | "symlink" | "hardlink" | "other";
  mode: number;
  /** Modification time, seconds since the epoch (fractional from a PAX header). */
  mtime: number;
  /** Symlink target, or the earlier member a hard link names. */
  linkname: string;
  /** The file's content (a view into the archive; empty for anything but a file). */
  data: Uint8Array;
}

const TYPES: Record<string, TarEntry["type"]> = {
  "0": "file",
  "\0": "file",
  "7": "file",
  "5": "dir",
  "2": "symlink",
  "1": "hardlink",
};

function text(header: Uint8Array, at: number, length: number): string {
  const field = header.subarray(at, at + length);
  const end = field.indexOf(0);
  return Buffer.from(end >= 0 ? field.subarray(0, end) : field).toString("utf8");
}

/** An octal number field, or GNU's base-256 one (high bit of the first byte set: sizes past 8 GiB). */
function number(header: Uint8Array, at: number, length: number): number {
  const field = header.subarray(at, at + length);
  if (((field[0] ?? 0) & 0x80) !== 0) {
    let value = (field[0] ?? 0) & 0x7f;
    for (const byte of field.subarray(1)) value = value * 256 + byte;
    return value;
  }
  return Number.parseInt(text(header, at, length).trim() || "0", 8);
}

/** `key=value` records of a PAX extended header ("<length> <key>=<value>\n" each). */
function paxRecords(data: Uint8Array): Map<string, string> {
  const out = new Map<string, string>();
  const all = Buffer.from(data).toString("utf8");
  let at = 0;
  while (at < all.length) {
    const space = all.indexOf(" ", at);
    const length = Number(all.slice(at, space));
    if (space < 0 || !Number.isInteger(length) || length <= 0) break;
    const record = all.slice(space + 1, at + length - 1);
    const eq = record.indexOf("=");
    if (eq > 0) out.set(record.slice(0, eq), record.slice(eq + 1));
    at += length;
  }
  return out;
}

/**
 * The members of a tar archive (ustar, GNU long names `L`/`K`, PAX `x` headers; global `g` headers ignored), in
 * order. Names and link targets are returned as stored: the caller checks them before touching a filesystem.
 * @example for (const e of readTar(bytes)) if (e.type === "file") console.log(e.name, e.data.length);
 */
export function readTar(tar: Uint8Array): TarEntry[] {
  const out: TarEntry[] = [];
  let longName: string | undefined;
  let longLink: string | undefined;
  let pax = new Map<string, string>();
  let at = 0;
  while (at + 512 <= tar.length) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const size = pax.has("size") ? Number(pax.get("size")) : number(header, 124, 12);
    const flag = String.fromCharCode(header[156] ?? 0);
    const start = at + 512;
    if (start + size > tar.length) throw new Error("truncated tar archive");
    const data = tar.subarray(start, start + size);
    at = start + Math.ceil(size / 512) * 512;
    if (flag === "L") longName = text(data, 0, data.length);
    else if (flag === "K") longLink = text(data, 0, data.length);
    else if (flag === "x") pax = paxRecords(data);
    else if (flag !== "g") {
      // the ustar name prefix (POSIX magic only: GNU's header keeps times there)
      const prefix = text(header, 257, 6) === "ustar" ? text(header, 345, 155) : "";
      const plain = text(header, 0, 100);
      const type = TYPES[flag] ?? "other";
      out.push({
        name: pax.get("path") ?? longName ?? (prefix ? `${prefix}/${plain}` : plain),
        type,
        mode: number(header, 100, 8),
        mtime: pax.has("mtime") ? Number(pax.get("mtime")) : number(header, 136, 12),
        linkname: pax.get("linkpath") ?? longLink ?? text(header, 157, 100),
        data: type === "file" ? data : new Uint8Array(0),
      });
      longName = longLink = undefined;
      pax = new Map();
    }
  }
  return out;
}

/** The content of the one regular file in a tar (the engine's archive of a single file; PAX headers skipped). */
export function onlyFileOfTar(tar: Buffer): Uint8Array {
  const file = readTar(tar).find((e) => e.type === "file");
  if (!file) throw new Error("the engine's archive held no file");
  return new Uint8Array(file.data);
}
