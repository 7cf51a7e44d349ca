import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The repository's own Harbor tasks (data/harbor). */
export const OWN_TASKS = resolve(import.meta.dir, "../../../../data/harbor");

/**
 * A scratch dataset folder with copies of `tasks` from data/harbor, changed by `edits` (path → new content, or
 * null to delete), for tests of bad input. Removed by the returned `remove`.
 * @example const d = await scratchDataset(["hello-file"], { "hello-file/instruction.md": null });
 */
export async function scratchDataset(
  tasks: string[],
  edits: Record<string, string | null> = {},
): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "air-harbor-"));
  for (const task of tasks) await cp(join(OWN_TASKS, task), join(dir, task), { recursive: true });
  for (const [path, content] of Object.entries(edits)) {
    if (content === null) await rm(join(dir, path), { recursive: true, force: true });
    else await writeFile(join(dir, path), content, { mode: 0o755 });
  }
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
