import type { BwrapSpec } from "./bwrap.ts";

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
