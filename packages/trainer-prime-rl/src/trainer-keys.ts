import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { ProcessContext } from "@air/core";
import TOML from "@iarna/toml";
import type { PrimeRlTrainerSection } from "./launch-sections.ts";

type TrainerContext = ProcessContext<PrimeRlTrainerSection>;

/** The user's own trainer TOML (`[trainer_process] config_file`), parsed, with the key naming it. */
function userTrainerToml(ctx: TrainerContext): { doc: Record<string, unknown>; key: string } | undefined {
  const { config_file } = ctx.section;
  if (!config_file) return undefined;
  const file = resolve(ctx.configDir, config_file);
  const doc = existsSync(file) ? (TOML.parse(readFileSync(file, "utf8")) as Record<string, unknown>) : {};
  return { doc, key: `trainer_process.config_file (${file})` };
}

/** The trainer's context parallel degree (`[model] cp`), as its TOML sets it. */
export function contextParallel(ctx: TrainerContext): { cp: number; key: string } {
  const cp = modelKey(ctx, "cp");
  return { cp: typeof cp.value === "number" ? cp.value : 1, key: cp.key };
}

/** A `[model]` key of the trainer's TOML as the user sets it (`trainer_config` or `config_file`), with its key. */
export function modelKey(ctx: TrainerContext, name: string): { value: unknown; key: string } {
  const own = userTrainerToml(ctx);
  const model = own ? own.doc.model : ctx.section.trainer_config.model;
  const value = typeof model === "object" && model !== null ? Object(model)[name] : undefined;
  return { value, key: own ? `${own.key} [model] ${name}` : `trainer_process.trainer_config.model.${name}` };
}

/**
 * The trainer's `[ckpt] interval` as its TOML sets it (generated: `[trainer_process] ckpt_interval`, then
 * `trainer_config`; or the user's `config_file`), with the key that sets it; interval 0 is none.
 * @example trainerCheckpointInterval(ctx) // { interval: 1, key: "trainer_process.ckpt_interval" }
 */
export function trainerCheckpointInterval(ctx: TrainerContext): { interval: number; key: string } {
  const read = (doc: unknown) => {
    const v = (doc as { ckpt?: { interval?: unknown } } | undefined)?.ckpt?.interval;
    return typeof v === "number" ? v : undefined;
  };
  const user = userTrainerToml(ctx);
  if (user) return { interval: read(user.doc) ?? 0, key: `${user.key} [ckpt] interval` };
  const merged = read(ctx.section.trainer_config);
  if (merged !== undefined) return { interval: merged, key: "trainer_process.trainer_config.ckpt.interval" };
  return { interval: ctx.section.ckpt_interval, key: "trainer_process.ckpt_interval" };
}
