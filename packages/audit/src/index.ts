export { baselineFindings, meanStd, metricFindings } from "./analysis.ts";
export { type GroundTruth, importedModules, namedFiles, type TaskFacts, taskFacts } from "./facts.ts";
export { forgeryPlans } from "./forgery-probes.ts";
export { noiseFinding } from "./noise.ts";
export { baselinePlan, type ProbePlan, trivialPlans } from "./probes.ts";
export { readPlans } from "./read-probes.ts";
export { formatTable } from "./report.ts";
export {
  AUDIT_CONFIG_DEFAULTS,
  AUDIT_SCHEMA_VERSION,
  type AuditOptions,
  type AuditReport,
  auditConfig,
} from "./run.ts";
export { reachesBaseline } from "./scores.ts";
export { FORGED } from "./shell.ts";
export { storeAudit } from "./store.ts";
export type { Finding, ProbeGroup, ProbeRun, Verdict } from "./types.ts";
