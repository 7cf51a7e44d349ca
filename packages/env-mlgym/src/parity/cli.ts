/**
 * The parity kit's command line.
 *   bun packages/env-mlgym/src/parity/cli.ts air [--write | --out <file>] [--mlgym-root <checkout>]   run air's agent
 *     commands (with --mlgym-root: env.aci = "mlgym", that checkout's tools); compare with expected.json, or
 *     write the outcomes to expected.json (--write) or to <file> (--out)
 *   bun packages/env-mlgym/src/parity/cli.ts prompts --mlgym-root <checkout> --out <file>   the command docs and system
 *     message air builds from that checkout's agent config (for {@link PROMPT_TASK}), to compare with the driver's
 *   bun packages/env-mlgym/src/parity/cli.ts compare <a.json> <b.json>   MATCH/DIFF per sequence between two outcome files
 * Exit code 1 when any sequence differs.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { loadMlgymAgent } from "../aci/mlgym-agent.ts";
import { mlgymSystemPrompt } from "../aci/mlgym-prompts.ts";
import {
  describeDifference,
  EXPECTED_FILE,
  loadSequences,
  PROMPT_TASK,
  runAirSequence,
  type SequenceOutcome,
} from "./kit.ts";

type Outcomes = Record<string, SequenceOutcome>;

function compare(expected: Outcomes, actual: Outcomes, labels: [string, string]): boolean {
  let same = true;
  for (const name of Object.keys(expected)) {
    const a = actual[name];
    const diff = a ? describeDifference(expected[name] as SequenceOutcome, a) : `missing in ${labels[1]}`;
    console.log(`${diff ? "DIFF " : "MATCH"} ${name}`);
    if (diff) {
      same = false;
      console.log(diff.replace(/^/gm, "    "));
    }
  }
  return same;
}

const [command, ...rest] = process.argv.slice(2);
if (command === "air") {
  const rootIndex = rest.indexOf("--mlgym-root");
  const agent = rootIndex >= 0 ? await loadMlgymAgent(rest[rootIndex + 1] as string) : undefined;
  const outcomes: Outcomes = {};
  for (const sequence of loadSequences()) outcomes[sequence.name] = await runAirSequence(sequence, agent);
  const outIndex = rest.indexOf("--out");
  const target = rest.includes("--write") ? EXPECTED_FILE : outIndex >= 0 ? rest[outIndex + 1] : undefined;
  if (target) {
    writeFileSync(target, `${JSON.stringify(outcomes, null, 1)}\n`);
    console.log(`wrote ${target} (${Object.keys(outcomes).length} sequences)`);
  } else {
    const expected = JSON.parse(readFileSync(EXPECTED_FILE, "utf8")) as Outcomes;
    process.exit(compare(expected, outcomes, ["expected", "air"]) ? 0 : 1);
  }
} else if (command === "prompts") {
  const root = rest[rest.indexOf("--mlgym-root") + 1] as string;
  const agent = await loadMlgymAgent(root);
  const out = { commandDocs: agent.commandDocs, system: mlgymSystemPrompt(agent, PROMPT_TASK) };
  writeFileSync(rest[rest.indexOf("--out") + 1] as string, `${JSON.stringify(out, null, 1)}\n`);
} else if (command === "compare" && rest.length === 2) {
  const [a, b] = rest.map((f) => JSON.parse(readFileSync(f as string, "utf8")) as Outcomes) as [
    Outcomes,
    Outcomes,
  ];
  process.exit(compare(a, b, [rest[0] as string, rest[1] as string]) ? 0 : 1);
} else {
  console.error("usage: cli.ts air [--write | --out <file>] | cli.ts compare <expected.json> <actual.json>");
  process.exit(2);
}
