import type { HarborTask } from "./task.ts";
import type { HarborRuntime, HarborSandbox } from "./types.ts";

export interface LocalHarborOptions {
  root: string;
  python: string;
  maxProcesses: number;
}

/** Harbor tasks that need no build, in bubblewrap sandboxes on this machine. */
export class LocalHarborRuntime implements HarborRuntime {
  readonly kind = "local" as const;
  constructor(readonly options: LocalHarborOptions) {}
  async prepare(_task: HarborTask): Promise<void> {
    throw new Error("not yet");
  }
  async open(_task: HarborTask, _options: { rolloutId: string }): Promise<HarborSandbox> {
    throw new Error("not yet");
  }
  async close(): Promise<void> {}
}
