import { resolve } from "node:path";

/**
 * A TOML value naming a local path relative to the config file: it starts with "./" or "../" (a bare name such as
 * `torchrun` is looked up on PATH, an absolute path is kept).
 * @example resolveLocal("/repo/configs", "../scripts/torchrun-sid") // "/repo/scripts/torchrun-sid"
 */
export function resolveLocal(dir: string, value: string): string {
  return /^\.\.?\//.test(value) ? resolve(dir, value) : value;
}

/** `[inference] command` / `[trainer_process] command` with "./…" and "../…" entries resolved against the TOML's dir. */
export function localCommand(dir: string, command: string[] | undefined): string[] | undefined {
  return command?.map((part) => resolveLocal(dir, part));
}

/** An `env` table with "./…" and "../…" values resolved against the TOML's dir (e.g. PYTHONPATH). */
export function localEnv(dir: string, env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, resolveLocal(dir, v)]));
}

/** GPU ids for CUDA_VISIBLE_DEVICES: none when `[deployment] device = "cpu"` (the ids only count processes). */
export function cudaIds(device: "cuda" | "cpu", ids: number[]): number[] {
  return device === "cpu" ? [] : ids;
}
