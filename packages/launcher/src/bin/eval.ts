#!/usr/bin/env bun
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { errorMessage } from "@air/core";
import { compareSummaries, type EvaluationReport, evaluateConfig } from "@air/eval";
import { readAuditFindings } from "../builtins.ts";
import { EXIT, helpAsked, printUsage, reportConfigError, resolveConfig } from "../cli.ts";
import { inferenceBaseUrl, inferenceChild } from "../commands.ts";
import { planGpus } from "../gpus.ts";
import { planOf } from "../run-plan.ts";
import type { RunConfig } from "../sections.ts";
import { Supervisor } from "../supervisor.ts";

const USAGE = `usage:
  eval <config.toml> [--section.key value ...]         rollouts only: per-task and overall figures, pass@k
  eval compare <a.json> <b.json> ... [--names a,b,...]  compare stored evaluations (MLGym best/last AUP)`;

/** `eval <config>`: starts the config's inference server when it has one, evaluates, stops the server. */
async function evaluate(file: string, overrides: string[]): Promise<number> {
  let config: RunConfig;
  try {
    config = await resolveConfig(file, overrides);
  } catch (error) {
    return reportConfigError(error);
  }
  const { launcher } = config.root;
  const stop = new AbortController();
  const supervisor = new Supervisor({
    runDir: config.runDir,
    graceMs: launcher.grace_ms,
    tailLines: launcher.log_tail_lines,
    onUnexpectedExit: (_child, reason) => {
      process.stderr.write(`error: ${reason}\n`);
      stop.abort();
    },
  });
  process.once("SIGINT", () => stop.abort());
  process.once("SIGTERM", () => stop.abort());
  try {
    // the GPU map as `rl` plans it (counts take visible GPUs in order)
    const planned = planGpus(config.root.deployment, process.env);
    if (planned.problem) throw new Error(planned.problem);
    const gpus = planned.map;
    const spec = await inferenceChild(planOf(config), gpus);
    if (spec) {
      process.stderr.write(`[eval] starting ${spec.role}: ${spec.argv.join(" ")}\n`);
      await supervisor.waitReady(supervisor.start(spec), stop.signal);
    }
    const report = await evaluateConfig(config, {
      signal: stop.signal,
      context: {
        inferenceUrl: inferenceBaseUrl(config),
        envGpuIds: gpus.env,
        audit: await readAuditFindings(config),
      },
    });
    const { samples, failed } = report.overall;
    const nothing = samples > 0 && failed === samples;
    process.stderr.write(
      `evaluation ${stop.signal.aborted ? "aborted" : nothing ? "failed" : report.status}: ` +
        `rollouts ${samples - failed} ok / ${failed} failed${nothing ? " (every rollout failed; see the errors above)" : ""}\n`,
    );
    return stop.signal.aborted || nothing ? EXIT.failed : EXIT.ok;
  } catch (error) {
    process.stderr.write(`error: ${errorMessage(error)}\n`);
    return EXIT.failed;
  } finally {
    for (const k of await supervisor.stopAll()) process.stderr.write(`[eval] killed: ${k}\n`);
  }
}

/** `eval compare a.json b.json [--names x,y]`: the comparison table and AUP of stored evaluations. */
function compare(args: string[]): number {
  const at = args.indexOf("--names");
  const names = at >= 0 ? (args[at + 1] ?? "").split(",") : undefined;
  const files = args.filter((_, i) => at < 0 || (i !== at && i !== at + 1));
  if (files.length < 1 || (names && names.length !== files.length)) {
    process.stderr.write(`${USAGE}\n`);
    return EXIT.badInput;
  }
  try {
    const named = files.map((f, i) => {
      const report = JSON.parse(readFileSync(f, "utf8")) as EvaluationReport;
      return { name: names?.[i] ?? `${report.label ?? basename(f, ".json")}`, summary: report };
    });
    process.stdout.write(`${compareSummaries(named).table}\n`);
    return EXIT.ok;
  } catch (error) {
    process.stderr.write(`error: ${errorMessage(error)}\n`);
    return EXIT.badInput;
  }
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (helpAsked(command)) return printUsage(USAGE, command);
  if (command === "compare") return compare(rest);
  return evaluate(command, rest);
}

process.exit(await main(process.argv.slice(2)));
