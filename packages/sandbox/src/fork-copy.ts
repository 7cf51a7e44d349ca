import { constants, readdirSync, readFileSync } from "node:fs";
import {
  chmod,
  copyFile,
  lchown,
  lstat,
  lutimes,
  mkdir,
  readdir,
  readFile,
  readlink,
  symlink,
} from "node:fs/promises";
import { join } from "node:path";

/**
 * Stops (SIGSTOP) every process of host uid `uid` — as root, one local sandbox's agent — until none new turns up,
 * and returns them (for {@link thaw}). With `root` (the sandbox's bwrap) only its descendants are looked at
 * (every process of a sandbox is one: orphans go to the namespace's init); else every process on the machine.
 * Nothing of that sandbox can change its workspace meanwhile.
 * @example const stopped = await freeze(200123, bwrapPid); try { ... } finally { thaw(stopped); }
 */
export async function freeze(uid: number, root?: number): Promise<number[]> {
  const stopped = new Set<number>();
  for (let round = 0; round < 20; round++) {
    let found = false;
    for (const pid of root === undefined ? await processesOf(uid) : descendantsOf(root, uid)) {
      if (stopped.has(pid)) continue;
      try {
        process.kill(pid, "SIGSTOP");
        stopped.add(pid);
        found = true;
      } catch {
        // gone meanwhile
      }
    }
    if (!found) return [...stopped];
  }
  thaw([...stopped]);
  throw new Error(`the processes of uid ${uid} kept starting new ones; not frozen`);
}

/** Descendants of `root` (through every thread's `children`) whose real uid is `uid`. */
function descendantsOf(root: number, uid: number): number[] {
  const out: number[] = [];
  const queue = [root];
  for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ")) {
          if (child.trim()) queue.push(Number(child));
        }
      } catch {
        // the thread ended
      }
    }
    if (pid !== root && realUid(pid) === uid) out.push(pid);
  }
  return out;
}

function realUid(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
  } catch {
    return undefined;
  }
}

/** Resumes the processes {@link freeze} stopped. */
export function thaw(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGCONT");
    } catch {
      // gone meanwhile
    }
  }
}

async function processesOf(uid: number): Promise<number[]> {
  const out: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const status = await readFile(`/proc/${name}/status`, "utf8").catch(() => "");
    const real = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    if (real === String(uid)) out.push(Number(name));
  }
  return out;
}

/**
 * Copies the tree `from` into the existing directory `to` in this process, owned by `uid`: directories and
 * regular files (copy-on-write clones where the filesystem has them: `COPYFILE_FICLONE`, else a plain copy),
 * symlinks as links (never followed), nothing else (FIFOs, sockets, devices). Modes and modification times are
 * kept. `skip` names top-level paths not to copy (the shared read-only paths). The source must not change while
 * this runs (its writers frozen).
 * @example await copyTree("/srv/sandboxes/local-1/workspace", "/srv/sandboxes/local-2/workspace", 200124, new Set(["data"]));
 */
export async function copyTree(from: string, to: string, uid: number, skip: Set<string>): Promise<void> {
  const walk = async (src: string, dest: string, top: boolean): Promise<void> => {
    for (const name of await readdir(src)) {
      if (top && skip.has(name)) continue;
      const s = join(src, name);
      const d = join(dest, name);
      const info = await lstat(s);
      if (info.isDirectory()) {
        await mkdir(d);
        await walk(s, d, false);
        await chmod(d, info.mode & 0o1777);
      } else if (info.isFile()) {
        await copyFile(s, d, constants.COPYFILE_FICLONE);
        await chmod(d, info.mode & 0o1777);
      } else if (info.isSymbolicLink()) await symlink(await readlink(s), d);
      else continue;
      await lchown(d, uid, uid);
      await lutimes(d, info.atime, info.mtime);
    }
  };
  await walk(from, to, true);
}
