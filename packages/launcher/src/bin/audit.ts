#!/usr/bin/env bun
import { AUDIT_CONFIG_DEFAULTS, auditConfig } from "@air/audit";
import { errorMessage } from "@air/core";
import { EXIT, helpAsked, printUsage, reportConfigError, resolveConfig } from "../cli.ts";

const USAGE = `usage:
  audit <config.toml> [--tasks a,b] [--repeats N] [--concurrency N] [--section.key value ...]
    probes every task of the config (baseline reproduction, trivial submissions, cheating probes, metric
    sanity) with the scripted policy in fresh sandboxes; exit 1 when any finding is critical`;

/** Takes `--name value` out of `args`; returns the value. */
function take(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  const [, value] = args.splice(at, 2);
  return value;
}

async function main(argv: string[]): Promise<number> {
  const [file, ...rest] = argv;
  if (helpAsked(file)) return printUsage(USAGE, file);
  const tasks = take(rest, "--tasks")?.split(",").filter(Boolean);
  const repeats = Number(take(rest, "--repeats") ?? 3);
  const concurrency = take(rest, "--concurrency");
  if (
    !Number.isInteger(repeats) ||
    repeats < 1 ||
    (concurrency !== undefined && !(Number(concurrency) >= 1))
  ) {
    process.stderr.write(`${USAGE}\n`);
    return EXIT.badInput;
  }
  let config: Awaited<ReturnType<typeof resolveConfig>>;
  try {
    config = await resolveConfig(file, rest, AUDIT_CONFIG_DEFAULTS);
  } catch (error) {
    return reportConfigError(error);
  }
  const stop = new AbortController();
  process.once("SIGINT", () => stop.abort());
  process.once("SIGTERM", () => stop.abort());
  try {
    const report = await auditConfig(config, {
      tasks,
      repeats,
      concurrency: concurrency === undefined ? undefined : Number(concurrency),
      signal: stop.signal,
    });
    process.stderr.write(`wrote ${report.files.json} and the audits table of ${report.files.sqlite}\n`);
    if (stop.signal.aborted) return EXIT.interrupted;
    return report.critical > 0 ? EXIT.failed : EXIT.ok;
  } catch (error) {
    process.stderr.write(`error: ${errorMessage(error)}\n`);
    return stop.signal.aborted ? EXIT.interrupted : EXIT.badInput;
  }
}

process.exit(await main(process.argv.slice(2)));
