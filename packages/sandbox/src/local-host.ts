import { chmod, chown, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type BwrapSpec, groupFor, passwdFor } from "./bwrap.ts";

/** What a `LocalSandbox` needs from its runtime: host paths, identities and limits. */
export interface SandboxHost {
  id: string;
  /** Host directory of this sandbox (workspace, passwd files); never mounted whole. */
  dir: string;
  /** Host directory mounted at /home/agent/workspace. */
  workspace: string;
  /** Host directory mounted as the agent shell's /tmp (1777; kept across its shells, carried by snapshots). */
  tmp: string;
  /** Host uid of the agent's processes (root mode) or air's own uid. */
  uid: number;
  identity: BwrapSpec["identity"];
  passwd: string;
  group: string;
  /** As root: a fresh unprivileged uid for one evaluation, given back with `freeUid` when it ended. */
  takeUid: () => number;
  freeUid: (uid: number) => void;
  /** Host directory for evaluation copies (0700, outside every sandbox). */
  evaluations: string;
  python: string;
  roPaths: string[];
  maxProcesses: number;
  memoryMb: number;
  asRoot: boolean;
  /** Shell text run once in every new agent shell. */
  agentInit: string;
  /** Where the workspace is mounted (the task's `environment.workdir`, else /home/agent/workspace). */
  workdir: string;
  /** The task environment's variables (agent shell, runs, evaluations). */
  env: Record<string, string>;
  /** Host directories mounted writable in the agent's sandbox (the environment's `dirs`). */
  dirs: { src: string; dest: string }[];
  onState?: (state: { id: string; rolloutId?: string; state: string; command?: string }) => void;
}

/** A new sandbox's host directories: its own, the workspace, passwd and group files, /tmp and the writable dirs. */
export type HostDirs = Pick<SandboxHost, "dir" | "workspace" | "passwd" | "group" | "tmp" | "dirs">;

/**
 * Makes the host directories of sandbox `id` under `root` (0700; /tmp 1777; the environment's writable `dirs`
 * owned by `uid` as root), with passwd and group files naming `agentId`.
 * @example const dirs = await makeHostDirs("/srv/sandboxes", "local-1-ab12cd", { uid, agentId, asRoot, dirs: ["/logs"] });
 */
export async function makeHostDirs(
  root: string,
  id: string,
  o: { uid: number; agentId: number; asRoot: boolean; dirs: string[] },
): Promise<HostDirs> {
  const dir = join(root, id);
  const workspace = join(dir, "workspace");
  await mkdir(workspace, { recursive: true, mode: 0o700 });
  const passwd = join(dir, "passwd");
  await writeFile(passwd, passwdFor(o.agentId));
  const group = join(dir, "group");
  await writeFile(group, groupFor(o.agentId));
  const tmp = join(dir, "tmp");
  await mkdir(tmp);
  await chmod(tmp, 0o1777);
  const dirs = o.dirs.map((dest, i) => ({ src: join(dir, `dir-${i}`), dest }));
  for (const d of dirs) {
    await mkdir(d.src, { mode: 0o700 });
    if (o.asRoot) await chown(d.src, o.uid, o.uid);
  }
  return { dir, workspace, passwd, group, tmp, dirs };
}
