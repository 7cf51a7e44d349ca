/**
 * Resolves Harbor's `${VAR}` and `${VAR:-default}` templates in `[verifier] env` / `[environment] env` values
 * from `host` (air's own environment); a `${VAR}` that is not set is an error naming it.
 * @example resolveEnvVars({ KEY: "${TOKEN:-none}" }, {}) // { KEY: "none" }
 */
export function resolveEnvVars(
  vars: Record<string, string>,
  host: Record<string, string | undefined> = process.env,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(vars)) {
    out[key] = value.replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
      (_, name: string, fallback?: string) => {
        const got = host[name];
        if (got !== undefined && got !== "") return got;
        if (fallback !== undefined) return fallback;
        throw new Error(`${key} needs \${${name}}, which is not set in air's environment`);
      },
    );
  }
  return out;
}

/** `K=V` strings for a docker exec. */
export function envList(vars: Record<string, string>): string[] {
  return Object.entries(vars).map(([k, v]) => `${k}=${v}`);
}
