import type Docker from "dockerode";
import type { DockerRuntime } from "./docker.ts";
import type { DockerEndpoint } from "./docker-client.ts";
import type { DockerRuntimeOptions } from "./docker-options.ts";

/** One Docker host of `[env.docker] hosts` and what it may hold. */
export interface DockerHostSpec extends DockerEndpoint {
  /** Short name in logs and events (default: the URL). */
  name: string;
  /** Sandboxes (containers in use) at once. */
  sandboxes: number;
  /** CPUs of the host for sandboxes: at most cpus / docker.cpus sandboxes. */
  cpus?: number;
  /** Memory of the host for sandboxes (MiB): at most memory_mb / docker.memory_mb sandboxes. */
  memoryMb?: number;
  /** GPU ids on that host handed to its containers. */
  gpuIds: string[];
  /** Warm containers kept on that host. */
  poolSize: number;
}

/** What the runtime knows of one host. */
export interface HostState {
  readonly spec: DockerHostSpec;
  readonly docker: Docker;
  runtime: DockerRuntime;
  /** Placing sandboxes there. */
  up: boolean;
  /** Sandboxes in use there now. */
  busy: number;
  /** Most sandboxes at once (sandboxes, CPUs, memory). */
  readonly slots: number;
  /** Sandboxes placed there in total. */
  placed: number;
  /** Times it was drained. */
  drains: number;
  /** Since when every health ping was answered (undefined after a failed one). */
  answeringSince?: number;
  /** Aborted when the host is drained: its sandboxes' calls fail at once. */
  drained: AbortController;
}

export interface DockerHostsOptions {
  /** Settings every host's containers share (image, limits, labels' run name, ...). */
  base: Omit<DockerRuntimeOptions, "docker" | "gpuIds" | "poolSize">;
  /** Only hosts with GPU ids take sandboxes. */
  requireGpu: boolean;
  /** Time between health pings of every host. */
  probeMs: number;
  log?: (level: "info" | "warn", message: string) => void;
  /** Sandbox state changes with the host's name (instead of `base.onState`). */
  onSandbox?: (state: {
    id: string;
    rolloutId?: string;
    state: string;
    command?: string;
    host: string;
  }) => void;
  /** Host events (placed, drained, readmitted) for the run's bus. */
  onHost?: (event: { host: string; state: "up" | "drained"; busy: number; slots: number }) => void;
}
