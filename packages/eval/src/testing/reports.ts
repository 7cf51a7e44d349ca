import { writeFileSync } from "node:fs";
import type { EvaluationSummary, TaskFigures } from "../index.ts";

/**
 * Figures of one task as `bun run eval` reports them (MLGym best/last, baseline 1, maximize, when `best` is
 * given), for tests of the comparison page.
 * @example taskFigures("t1", 10, 9)
 */
export function taskFigures(task: string, best?: number, last?: number): TaskFigures {
  return {
    task,
    examples: 1,
    samples: 2,
    failed: 0,
    meanReward: 0,
    accuracy: 0.5,
    passAtK: { "1": 0.5 },
    mlgym:
      best === undefined
        ? undefined
        : { metric: "Score", direction: "maximize", baseline: 1, runs: 2, scoredRuns: 2, best, last },
  };
}

/**
 * Writes an eval report file with these tasks; returns its path.
 * @example writeReport("/tmp/a.json", "step-0", [taskFigures("t1", 2, 2)])
 */
export function writeReport(path: string, label: string, tasks: TaskFigures[]): string {
  const report: EvaluationSummary & { label: string } = { label, tasks, overall: taskFigures("overall") };
  writeFileSync(path, JSON.stringify(report));
  return path;
}
