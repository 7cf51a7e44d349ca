import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { type CheckResult, fail, ok, skip } from "./check-result.ts";
import { diskSpace } from "./disk.ts";
import type { RunPlan } from "./run-plan.ts";

/** The nearest directory of `path` that exists (a run's output dir may not yet). */
function existing(path: string): string {
  let dir = path;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

function gb(bytes: number): string {
  return `${(bytes / 1e9).toFixed(1)} GB`;
}

/**
 * The trainer's checkpoints against the free space where they go (the trainer process kind's `disk` estimate;
 * prime-rl: parameters × fp32 weights and AdamW state, × the checkpoints kept plus the one being saved): prints
 * the estimate, fails with the numbers and the keys that change it when it cannot fit. No check when the kind
 * has no estimate; `skip` when its model's size is unknown.
 * @example checkCheckpointDisk(planOf(config), process.env) // [ok("trainer checkpoints fit on disk", "48.0 GB per checkpoint ...")]
 */
export function checkCheckpointDisk(
  run: RunPlan,
  env: Record<string, string | undefined>,
  space: typeof diskSpace = diskSpace,
): CheckResult[] {
  const trainer = run.trainer;
  if (!trainer?.kind.disk) return [];
  const name = "trainer checkpoints fit on disk";
  const estimate = trainer.kind.disk(trainer.ctx, env);
  if (!estimate)
    return [skip(name, `the size of [model] name = "${run.config.root.model.name}" is unknown here`)];
  const where = existing(estimate.dir);
  const free = space(where)?.free;
  if (free === undefined) return [skip(name, `${estimate.how}; the free space under ${where} is unknown`)];
  const line = `${estimate.how}; ${gb(free)} free under ${where}`;
  if (estimate.bytes <= free) return [ok(name, line)];
  return [
    fail(
      name,
      `${line}: ${gb(estimate.bytes)} do not fit; free space there, or change ${estimate.keys.join(" / ")} (or [run] output_dir)`,
    ),
  ];
}
