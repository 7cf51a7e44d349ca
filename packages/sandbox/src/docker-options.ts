import type Docker from "dockerode";

/** Settings of the docker runtime; defaults mirror MLGym's `aigym/mlgym-agent:latest`. */
export interface DockerRuntimeOptions {
  /** The image of tasks that bring none (`TaskFiles.environment`); without it every task must bring its own. */
  image?: string;
  user: string;
  workspace: string;
  /** Shell text run once in every new agent shell before its first command (e.g. an env's guard functions). */
  agentInit?: string;
  /** Command prepended to the agent shell (e.g. activating a conda env). */
  shellInit?: string;
  /** Paths made root-owned and not writable by others at container start (e.g. the conda install). */
  lockPaths?: string[];
  memoryMb: number;
  cpus: number;
  pidsLimit: number;
  network: string;
  /** GPU ids handed to every container of this runtime (DeviceRequests). */
  gpuIds: string[];
  /** Warm containers kept for reuse. */
  poolSize: number;
  runName: string;
  timeoutMs: number;
  docker?: Docker;
  onState?: (state: { id: string; rolloutId?: string; state: string; command?: string }) => void;
}
