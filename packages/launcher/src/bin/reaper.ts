#!/usr/bin/env bun
/**
 * A run's reaper: started by the launcher in its own session, it holds the read end of a pipe whose write end only
 * the launcher has. When the pipe closes without the launcher's "done" line — the launcher died, whatever killed it
 * (SIGKILL, the OOM killer, a crash) — it stops the run's processes and removes its containers, as `rl clean` does.
 * A "containers" line means the launcher ended but an engine holding the run's containers did not answer; then,
 * as after a launcher's death, it keeps trying to remove them for up to <sweep ms> (0: not at all), until every
 * engine answered and nothing new turned up for 10 s. An "abandoned" line means the launcher did not wait for its
 * orchestrator (a second Ctrl-C), whose container creates may still land: it sweeps the same way, at least 30 s.
 * usage: reaper.ts <run dir> <grace ms> [sweep ms]
 */
import { sleep } from "@air/core";
import { cleanRunDir } from "../clean.ts";
import { sweepRunContainers } from "../containers.ts";

const [runDir, graceArg, sweepArg] = process.argv.slice(2);
if (!runDir) {
  process.stderr.write("usage: reaper.ts <run dir> <grace ms> [sweep ms]\n");
  process.exit(2);
}
const graceMs = Number(graceArg ?? "10000");
const sweepMs = Number(sweepArg ?? "0");
let said = "";
for await (const chunk of Bun.stdin.stream()) said += new TextDecoder().decode(chunk);
if (said.includes("done\n")) process.exit(0);
const stamp = () => new Date().toISOString();
const log = (line: string) => process.stderr.write(`${stamp()} ${line}\n`);
// the launcher gave up waiting for its orchestrator (a second Ctrl-C): a container create it had sent may land later
const abandoned = said.includes("abandoned\n");
if (said.includes("containers\n")) log(`the launcher of ${runDir} ended with containers it could not remove`);
else if (abandoned) log(`the launcher of ${runDir} ended without waiting for its orchestrator`);
else {
  log(`the launcher of ${runDir} is gone; cleaning up`);
  for (const action of await cleanRunDir(runDir, graceMs)) log(action);
}
// Sweep until every engine answered and nothing new turned up for SETTLE_MS (a create sent before the launcher
// ended lands afterwards), for at most sweep ms; after an abandoned orchestrator, for ABANDONED_MS at least.
const SETTLE_MS = 10_000;
const ABANDONED_MS = 30_000;
const started = Date.now();
const deadline = started + Math.max(sweepMs, abandoned ? ABANDONED_MS : 0);
let quietSince = started;
while (sweepMs > 0 || abandoned) {
  const sweep = await sweepRunContainers(runDir);
  for (const id of sweep.removed) log(`removed container ${id.slice(0, 12)} of ${runDir}`);
  if (sweep.removed.length > 0) quietSince = Date.now();
  const reachable = sweep.unreachable.length === 0;
  const settled =
    Date.now() - quietSince >= SETTLE_MS && (!abandoned || Date.now() - started >= ABANDONED_MS);
  if (reachable && settled) break;
  if (Date.now() >= deadline) {
    if (!reachable)
      log(
        `gave up on ${sweep.unreachable.join(", ")}: \`rl clean\` removes the run's containers once it answers`,
      );
    break;
  }
  await sleep(2000);
}
log("done");
process.exit(0);
