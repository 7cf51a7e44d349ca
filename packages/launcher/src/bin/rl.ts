#!/usr/bin/env bun
import { errorMessage } from "@air/core";
import {
  checkCommand,
  cleanCommand,
  EXIT,
  helpAsked,
  printUsage,
  reportConfigError,
  resolveConfig,
  validateCommand,
} from "../cli.ts";
import { launchRun } from "../launch.ts";
import { watchParent } from "../reaper.ts";
import { respawnIfNeeded } from "../respawn.ts";

const USAGE = `usage:
  rl <config.toml> [--resume] [--section.key value ...]   run training
  rl validate <config.toml> [overrides]                    check the config and print it resolved
  rl check <config.toml> [overrides]                       preflight only, one line per check
  rl clean <output_dir> [--grace-ms N]                     stop leftovers of earlier runs`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (helpAsked(command)) return printUsage(USAGE, command);
  if (command === "validate") return validateCommand(rest);
  if (command === "check") return checkCommand(rest);
  if (command === "clean") return cleanCommand(rest);
  const resume = rest.includes("--resume");
  const overrides = rest.filter((a) => a !== "--resume");
  let config: Awaited<ReturnType<typeof resolveConfig>>;
  try {
    config = await resolveConfig(command, overrides);
  } catch (error) {
    return reportConfigError(error);
  }
  const restarted = await respawnIfNeeded(config);
  if (restarted !== undefined) return restarted;
  const stop = new AbortController();
  const force = new AbortController();
  const onSignal = (signal: string) => {
    if (!stop.signal.aborted) {
      process.stderr.write(`\n[launcher] ${signal}: stopping the run (again to skip grace periods)\n`);
      stop.abort();
    } else force.abort();
  };
  process.on("SIGINT", () => onSignal("SIGINT"));
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGHUP", () => onSignal("SIGHUP"));
  watchParent(() => onSignal("the process that started rl exited"));
  let fatal: unknown;
  const onFatal = (error: unknown) => {
    process.stderr.write(`\n[launcher] unhandled error, stopping the run: ${errorMessage(error)}\n`);
    fatal ??= error;
    stop.abort();
  };
  process.on("unhandledRejection", onFatal);
  process.on("uncaughtException", onFatal);
  const result = await launchRun(config, {
    resume,
    signal: stop.signal,
    force: force.signal,
    tty: process.stdout.isTTY === true,
  });
  return fatal === undefined ? result.exitCode : EXIT.failed;
}

process.exit(await main(process.argv.slice(2)));
