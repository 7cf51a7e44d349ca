/** The content of the one regular file in a tar (the engine's archive of a single file; PAX headers skipped). */
export function onlyFileOfTar(tar: Buffer): Uint8Array {
  let at = 0;
  while (at + 512 <= tar.length) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const size = Number.parseInt(
      header.subarray(124, 136).toString("latin1").replace(/\0.*$/, "").trim() || "0",
      8,
    );
    const type = String.fromCharCode(header[156] ?? 0);
    const start = at + 512;
    if (type === "0" || type === "\0") return new Uint8Array(tar.subarray(start, start + size));
    at = start + Math.ceil(size / 512) * 512;
  }
  throw new Error("the engine's archive held no file");
}
