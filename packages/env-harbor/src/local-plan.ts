import { readFile } from "node:fs/promises";
import { isAbsolute, join, normalize, posix } from "node:path";
import type { HarborTask } from "./task.ts";

/**
 * Images the local runtime stands in for: the test image (`scripts/build-test-image`) is this machine's Debian
 * with python3, numpy, pandas and scikit-learn, the system the bubblewrap sandbox mounts read-only.
 */
export const LOCAL_IMAGES = ["air-mlgym-test:latest", "air-mlgym-test"];

/** How a task runs without a build: its WORKDIR, the files COPY puts there, its ENV. */
export type LocalPlan =
  | { ok: true; workdir: string; copies: Array<{ src: string; dest: string }>; env: Record<string, string> }
  | { ok: false; reason: string };

/** Dockerfile lines with continuations joined and comments dropped, each with its first line number. */
function instructions(text: string): Array<{ line: number; word: string; args: string }> {
  const out: Array<{ line: number; word: string; args: string }> = [];
  let pending = "";
  let start = 0;
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (!pending && (line === "" || line.startsWith("#"))) return;
    if (!pending) start = i + 1;
    pending += `${line.replace(/\\$/, "")} `;
    if (line.endsWith("\\")) return;
    const [word = "", ...rest] = pending.trim().split(/\s+/);
    out.push({ line: start, word: word.toUpperCase(), args: rest.join(" ") });
    pending = "";
  });
  return out;
}

/**
 * Whether a task can run on the local (bubblewrap) runtime, and how: a Dockerfile of only `FROM` the test image
 * (after `base_images`), `WORKDIR`, `ENV`, `COPY`/`ADD` of local files into the WORKDIR, and `LABEL`/`CMD`/
 * `ENTRYPOINT`/`USER` (ignored), or a prebuilt `docker_image` that is the test image. Anything else (a `RUN`, a
 * COPY outside the WORKDIR, another base image) needs docker: the reason names the line.
 * @example await localPlan(task, {}) // { ok: true, workdir: "/app", copies: [], env: {} }
 */
export async function localPlan(task: HarborTask, mapping: Record<string, string>): Promise<LocalPlan> {
  const mapped = (image: string) => mapping[image] ?? image;
  if (!task.dockerfile) {
    const image = mapped(task.config.environment.docker_image ?? "");
    return LOCAL_IMAGES.includes(image)
      ? { ok: true, workdir: "/", copies: [], env: {} }
      : { ok: false, reason: `docker_image ${image} is not the local test image (${LOCAL_IMAGES[0]})` };
  }
  let workdir = "/";
  const copies: Array<{ src: string; dest: string }> = [];
  const env: Record<string, string> = {};
  const pendingCopies: Array<{ line: number; srcs: string[]; dest: string }> = [];
  let from = false;
  for (const { line, word, args } of instructions(await readFile(task.dockerfile, "utf8"))) {
    const at = `Dockerfile line ${line}`;
    if (word === "FROM") {
      if (from) return { ok: false, reason: `${at}: a second FROM (multi-stage builds need docker)` };
      const image = mapped(args.split(/\s+/)[0] ?? "");
      if (!LOCAL_IMAGES.includes(image))
        return {
          ok: false,
          reason: `${at}: FROM ${image} is not the local test image (${LOCAL_IMAGES[0]}); it needs docker`,
        };
      from = true;
    } else if (word === "WORKDIR") {
      workdir = posix.resolve(workdir, args.trim());
    } else if (word === "ENV") {
      const m = args.match(/^(\S+?)(?:=|\s+)(.*)$/);
      if (m?.[1]) env[m[1]] = (m[2] ?? "").replace(/^"(.*)"$/, "$1");
    } else if (word === "COPY" || word === "ADD") {
      const parts = args.split(/\s+/).filter((p) => !p.startsWith("--"));
      const dest = parts.pop();
      if (!dest || parts.length === 0)
        return { ok: false, reason: `${at}: ${word} without source or destination` };
      pendingCopies.push({ line, srcs: parts, dest: posix.resolve(workdir, dest) });
    } else if (!["LABEL", "CMD", "ENTRYPOINT", "USER", "EXPOSE", "ARG", "MAINTAINER"].includes(word)) {
      return { ok: false, reason: `${at}: ${word} needs a docker build` };
    }
  }
  if (workdir === "/")
    return {
      ok: false,
      reason: "the Dockerfile sets no WORKDIR (the local runtime mounts the WORKDIR only)",
    };
  for (const { line, srcs, dest } of pendingCopies) {
    if (dest !== workdir && !dest.startsWith(`${workdir}/`))
      return {
        ok: false,
        reason: `Dockerfile line ${line}: COPY to ${dest}, outside the WORKDIR ${workdir}, needs docker`,
      };
    for (const src of srcs) {
      const rel = normalize(src);
      if (isAbsolute(rel) || rel.startsWith("..") || /[*?[]|^https?:/.test(src))
        return {
          ok: false,
          reason: `Dockerfile line ${line}: COPY ${src} is not a plain path in environment/`,
        };
      copies.push({
        src: join(task.dir, "environment", rel),
        dest: srcs.length > 1 || dest.endsWith("/") ? posix.join(dest, posix.basename(rel)) : dest,
      });
    }
  }
  return { ok: true, workdir, copies, env };
}
