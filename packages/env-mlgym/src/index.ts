export { Editor } from "./aci/editor.ts";
export { footer, NO_OUTPUT, observation, truncateOutput } from "./aci/observation.ts";
export { BLOCKLIST, BLOCKLIST_STANDALONE, blockedName, parseCommand } from "./aci/parse.ts";
export { buildTaskFiles } from "./bundle.ts";
export { checkTasks } from "./checks.ts";
export { type MlgymConfig, mlgymConfigSchema } from "./config.ts";
export { type EvaluationResult, evaluateTask, parseMetrics } from "./evaluation.ts";
export { forgeChecks, proxyProblem } from "./guard/forgeable.ts";
export { GUARD_EXIT, guarded, guardedCommand, IMPORT_GUARD } from "./guard/guard.ts";
export { checkDockerHosts, hostSpecs } from "./hosts.ts";
export {
  canonicalScores,
  KNOWN_TASK_DIRECTIONS,
  KNOWN_TASK_PRISTINE_FILES,
  KNOWN_TASK_SCORE_RANGES,
  KNOWN_TASK_SECRET_FILES,
  lookupMetric,
  metricDirection,
} from "./known-tasks.ts";
export { mlgymLaunch, mlgymPreflight } from "./launch.ts";
export { createMlgymEnvironment, mlgymPlugin } from "./plugin.ts";
export { MlgymSession } from "./session.ts";
export type { SessionSnapshot } from "./session-types.ts";
export { namedFiles } from "./tamper.ts";
export { dataHint, loadTask, TASK_ENTRYPOINTS, type Task, taskFileById } from "./task.ts";
export { loadTaskSet, perTask, type TaskSet } from "./task-set.ts";

import { mlgymPlugin } from "./plugin.ts";
export default mlgymPlugin;
