/**
 * Python's `str.format` for the named fields MLGym's templates use (`{name}`, `{{`, `}}`); an unknown field
 * is an error, as in Python.
 * @example pyFormat("{a} {{b}}", { a: 1 }) // "1 {b}"
 */
export function pyFormat(template: string, values: Record<string, unknown>): string {
  return template.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (match, name: string | undefined) => {
    if (match === "{{") return "{";
    if (match === "}}") return "}";
    const key = name ?? "";
    if (!(key in values)) throw new Error(`template field {${key}} has no value`);
    return String(values[key]);
  });
}
