import type { AuditFindings } from "@air/core";

/**
 * Each task's evaluation noise for `min_improvement = "noise"`, from the latest `bun run audit` of this config
 * (the launcher reads it from the run's store and hands it to every plugin as `ctx.audit`). Throws when there is
 * none at all, so a run never silently trains without the threshold it asked for.
 * @example const noise = auditNoise(ctx.audit); noise.apartmentRent // 0.004
 */
export function auditNoise(audit: AuditFindings | undefined): Readonly<Record<string, number>> {
  const hint =
    'min_improvement = "noise" needs each task\'s evaluation noise: run `bun run audit <config> --repeats 3` first';
  if (!audit) throw new Error(`${hint} (it stores it in the run's store); the run has no store yet`);
  if (audit.unreadable) throw new Error(`${hint}; ${audit.source} cannot be read: ${audit.unreadable}`);
  if (Object.keys(audit.noise).length === 0)
    throw new Error(`${hint} (it stores it in ${audit.source}); the store has no evaluation-noise finding`);
  return audit.noise;
}
