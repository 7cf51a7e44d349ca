import { z } from "zod";
import { knownKinds, type ProcessRole } from "./kind-table.ts";

/**
 * A process section's schema, built from the kinds the launcher knows: the launcher's own keys (`keys`), `kind`
 * (one of the known kinds, or `none`, the section's default that starts nothing), and the kind's own keys,
 * checked by its `section` schema (strict: a key no kind knows is "unknown"; a key of another kind says whose it
 * is; with `none` the keys of the known kinds are inert). The output holds the kind's keys as its schema outputs
 * them (defaults filled in), untyped here: the launcher hands them to the kind through its schema again
 * (`process-kinds.ts`), so the kind's hooks get them typed.
 * @example processSection("inference", { port: z.number() }, "external", "...").parse({ kind: "vllm", port: 1 })
 */
export function processSection<K extends z.ZodRawShape>(
  role: ProcessRole,
  keys: K,
  none: string,
  describe: string,
) {
  const kinds = knownKinds(role);
  const names: [string, ...string[]] = [none, ...Object.keys(kinds)];
  const launcherKeys = new Set(["kind", ...Object.keys(keys)]);
  const ownerOf = (key: string) =>
    Object.entries(kinds)
      .filter(([, kind]) => kind.section instanceof z.ZodObject && key in kind.section.shape)
      .map(([name]) => `"${name}"`);
  return z
    .object({ kind: z.enum(names).default(none).describe(describe), ...keys })
    .catchall(z.unknown())
    .superRefine((section, ctx) => {
      const own = Object.fromEntries(Object.entries(section).filter(([k]) => !launcherKeys.has(k)));
      const kind = String(section.kind);
      // `none` starts nothing: the keys of the kinds it could start are inert (a `--<role>.kind` override keeps
      // the file valid); a key no kind knows is still unknown.
      const orphans = Object.keys(own).filter((k) => ownerOf(k).length === 0);
      const schema = kinds[kind]?.section ?? z.object({}).strict();
      const parsed = kinds[kind]
        ? schema.safeParse(own)
        : schema.safeParse(Object.fromEntries(orphans.map((k) => [k, own[k]])));
      if (parsed.success) return;
      for (const issue of parsed.error.issues) {
        if (issue.code !== "unrecognized_keys") {
          ctx.addIssue({ ...issue });
          continue;
        }
        const keys: string[] = issue.keys;
        const unknown = keys.filter((k) => ownerOf(k).length === 0);
        if (unknown.length > 0) ctx.addIssue({ ...issue, keys: unknown });
        for (const key of keys.filter((k) => ownerOf(k).length > 0))
          ctx.addIssue({
            code: "custom",
            path: [...issue.path, key],
            message: `kind = "${kind}" takes no ${key} (a key of kind ${ownerOf(key).join(", ")})`,
          });
      }
    })
    .transform((section) => {
      // The kind's keys as its schema outputs them (defaults filled in): what `rl validate` prints.
      const kind = kinds[String(section.kind)];
      const own = Object.fromEntries(Object.entries(section).filter(([k]) => !launcherKeys.has(k)));
      const parsed = kind?.section.safeParse(own);
      return parsed?.success ? { ...section, ...parsed.data } : section;
    });
}
