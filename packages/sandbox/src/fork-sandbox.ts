import { carryExports } from "./shell-exports.ts";
import type { AcquireOptions, Runtime, Sandbox, TaskFiles } from "./types.ts";

/**
 * A new sandbox in live `from`'s state now (tree rollouts): the runtime's own `fork`, or, for a runtime without one
 * (the unsandboxed local runtime), a new sandbox of `from`'s workspace tar given `from`'s exported variables.
 * @example const child = await forkSandbox(runtime, parent, files, { rolloutId: "s0-r5" });
 */
export async function forkSandbox(
  runtime: Runtime,
  from: Sandbox,
  files: TaskFiles,
  options: AcquireOptions,
): Promise<Sandbox> {
  if (runtime.fork) return runtime.fork(from, files, options);
  const box = await runtime.acquire(files, { ...options, snapshot: await from.snapshot() });
  await carryExports(from, box).catch(async (error) => {
    await runtime.release(box, true);
    throw error;
  });
  return box;
}
