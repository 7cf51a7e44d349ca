import { existsSync } from "node:fs";
import { chown, lstat, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { BwrapSpec } from "./bwrap.ts";
import { runProcess } from "./process.ts";
import type { SharedPath } from "./shared.ts";
import { shellQuote } from "./shell.ts";
import type { EvaluationOutput, EvaluationRequest } from "./types.ts";

/**
 * Prepares an evaluation's copy in one spawn: drops symlinks and special files, hands it to the evaluation's uid,
 * copies in the shared paths the evaluation files lay something over or into (reflinks where the filesystem has
 * them), and lays the pristine evaluation files over it (root-owned when air is root: the evaluation can read,
 * not change them). Returns the shared paths still to mount read-only from the bundle.
 */
export async function layEvaluationFiles(
  copy: string,
  evaluation: string,
  shared: SharedPath[],
  evalUid: number | undefined,
): Promise<SharedPath[]> {
  const owner = evalUid === undefined ? "" : `chown -R -P ${evalUid}:${evalUid} "$1" && `;
  const overlaid = shared.filter((s) => existsSync(join(evaluation, s.path)));
  const bring = overlaid.map((s) => {
    const into = shellQuote(join(copy, s.path));
    return `rm -rf ${into} && cp -a --reflink=auto ${shellQuote(s.src)} ${into} && `;
  });
  const script = `find -P "$1" -mindepth 1 ! -type f ! -type d -delete && ${bring.join("")}${owner}cp -a --reflink=auto "$2"/. "$1"/`;
  const prepared = await runProcess(["sh", "-c", script, "sh", copy, evaluation], {
    cwd: "/",
    timeoutMs: 60_000,
  });
  if (prepared.exitCode !== 0) throw new Error(`preparing the evaluation copy failed: ${prepared.stderr}`);
  return shared.filter((s) => !overlaid.includes(s));
}

/**
 * A fresh, empty host directory for an evaluation's `collect.dir` (in the evaluation's own folder `dir`), owned by
 * the evaluation's uid when it has one; undefined when the request collects nothing.
 */
export async function collectDir(
  dir: string,
  request: EvaluationRequest,
  uid: number | undefined,
): Promise<string | undefined> {
  if (!request.collect) return undefined;
  const path = join(dir, "collect");
  await mkdir(path, { mode: 0o700 });
  if (uid !== undefined) await chown(path, uid, uid);
  return path;
}

/** An evaluation's mounts: its folders read-only at their `dest`, the collect directory writable. */
export function evaluationBinds(request: EvaluationRequest, collect: string | undefined): BwrapSpec["binds"] {
  const binds = (request.folders ?? []).map((f) => ({ src: f.src, dest: f.dest, readOnly: true }));
  if (collect && request.collect) binds.push({ src: collect, dest: request.collect.dir, readOnly: false });
  return binds;
}

/** The `collect.files` the evaluation wrote, by name (regular files only; a link is not followed). */
export async function readCollected(
  request: EvaluationRequest,
  collect: string | undefined,
): Promise<EvaluationOutput["collected"]> {
  if (!collect || !request.collect) return undefined;
  const out: Record<string, string> = {};
  for (const name of request.collect.files) {
    if (name.includes("/")) continue;
    const path = join(collect, name);
    const info = await lstat(path).catch(() => undefined);
    if (info?.isFile()) out[name] = await readFile(path, "utf8");
  }
  return out;
}

/** Bytes under a host directory (`du -sb`), or undefined when `du` cannot tell. */
export async function diskUsage(path: string): Promise<number | undefined> {
  const out = await runProcess(["du", "-sb", path], { cwd: "/", timeoutMs: 60_000 });
  const bytes = Number(out.stdout.split(/\s/)[0]);
  return Number.isFinite(bytes) ? bytes : undefined;
}
