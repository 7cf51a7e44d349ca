export type AirErrorCode =
  | "CONFIG_INVALID"
  | "PLUGIN_NOT_FOUND"
  | "PLUGIN_INVALID"
  | "HOOK_FAILED"
  | "TIMEOUT"
  | "ENV_FAILED"
  | "POLICY_FAILED"
  | "TRAINER_FAILED"
  | "PREFLIGHT_FAILED"
  | "RUN_FAILED"
  | "ABORTED";

export interface AirErrorOptions {
  plugin?: string;
  hook?: string;
  cause?: unknown;
  /** Extra lines shown under the message (e.g. every config issue). */
  details?: string[];
}

/**
 * The one error class of air. Its message reads `[plugin reward-delta] hook "score": division by zero`.
 * @example throw new AirError("TIMEOUT", "no answer after 30000 ms", { plugin: "openai", hook: "generate" });
 */
export class AirError extends Error {
  readonly code: AirErrorCode;
  readonly plugin?: string;
  readonly hook?: string;
  readonly details: string[];

  constructor(code: AirErrorCode, message: string, options: AirErrorOptions = {}) {
    super(
      formatMessage(message, options),
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "AirError";
    this.code = code;
    this.plugin = options.plugin;
    this.hook = options.hook;
    this.details = options.details ?? [];
  }
}

function formatMessage(message: string, { plugin, hook }: AirErrorOptions): string {
  const where = [plugin ? `[plugin ${plugin}]` : "", hook ? `hook "${hook}":` : ""].filter(Boolean).join(" ");
  return where ? `${where} ${message}` : message;
}

/** The message of anything thrown. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** Wraps `error` as an AirError of `code` for `plugin`/`hook`, keeping an AirError's own code. */
export function wrapError(error: unknown, code: AirErrorCode, plugin: string, hook: string): AirError {
  if (error instanceof AirError && error.plugin) return error;
  const inner = error instanceof AirError ? error.code : code;
  return new AirError(inner, errorMessage(error), { plugin, hook, cause: error });
}
