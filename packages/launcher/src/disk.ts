import { statfsSync } from "node:fs";

/** What a full disk looks like in an error: Node/Bun's code, Python's OSError text, SQLite's. */
const DISK_FULL = /ENOSPC|No space left on device|SQLITE_FULL|database or disk is full/i;

/** Free and total bytes of the file system holding `path` (for an unprivileged writer), or undefined. */
export function diskSpace(path: string): { free: number; total: number } | undefined {
  try {
    const s = statfsSync(path);
    return { free: s.bavail * s.bsize, total: s.blocks * s.bsize };
  } catch {
    return undefined;
  }
}

function size(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${Math.round(bytes / 1024)} KiB`;
}

/**
 * The line a failed run adds when the disk under its run dir filled up — a full-disk error anywhere in `error`, or
 * less than `minFreeBytes` free now — saying where, how full, and how to continue; undefined otherwise.
 * @example diskFullHint("/out/q", "ENOSPC: no space left on device, write", "run.toml", 4)
 * // "the disk under /out/q is full (0 KiB free of 6.0 MiB): free space there, then `rl run.toml --resume` continues after step 4"
 */
export function diskFullHint(
  runDir: string,
  error: string | undefined,
  configFile: string,
  lastStep: number | undefined,
  minFreeBytes = 1024 ** 2,
): string | undefined {
  const space = diskSpace(runDir);
  const full =
    (error !== undefined && DISK_FULL.test(error)) || (space !== undefined && space.free < minFreeBytes);
  if (!full) return undefined;
  const how = space ? ` (${size(space.free)} free of ${size(space.total)})` : "";
  const from = lastStep === undefined ? "from the start" : `after step ${lastStep}`;
  return `the disk under ${runDir} is full${how}: free space there, then \`rl ${configFile} --resume\` continues ${from}`;
}
