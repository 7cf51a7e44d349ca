import { chown, lstat, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { BwrapSpec } from "./bwrap.ts";
import { runProcess } from "./process.ts";
import type { EvaluationOutput, EvaluationRequest } from "./types.ts";

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
