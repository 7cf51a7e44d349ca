#!/usr/bin/env bun
/**
 * A run's reaper: started by the launcher in its own session, it holds the read end of a pipe whose write end only
 * the launcher has. When the pipe closes without the launcher's "done" line — the launcher died, whatever killed it
 * (SIGKILL, the OOM killer, a crash) — it stops the run's processes and removes its containers, as `rl clean` does.
 * A "containers" line means the launcher ended but an engine holding the run's containers did not answer; then,
 * as after a launcher's death, it keeps trying to remove them for up to <sweep ms> (0: once).
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
if (said.includes("containers\n")) log(`the launcher of ${runDir} ended with containers it could not remove`);
else {
  log(`the launcher of ${runDir} is gone; cleaning up`);
  for (const action of await cleanRunDir(runDir, graceMs)) log(action);
}
const deadline = Date.now() + sweepMs;
while (sweepMs > 0) {
  const sweep = await sweepRunContainers(runDir);
  for (const id of sweep.removed) log(`removed container ${id.slice(0, 12)} of ${runDir}`);
  if (sweep.unreachable.length === 0) break;
  if (Date.now() >= deadline) {
    log(
      `gave up on ${sweep.unreachable.join(", ")}: \`rl clean\` removes the run's containers once it answers`,
    );
    break;
  }
  await sleep(2000);
}
log("done");
process.exit(0);
