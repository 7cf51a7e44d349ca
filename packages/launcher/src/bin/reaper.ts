#!/usr/bin/env bun
/**
 * A run's reaper: started by the launcher in its own session, it holds the read end of a pipe whose write end only
 * the launcher has. When the pipe closes without the launcher's "done" line — the launcher died, whatever killed it
 * (SIGKILL, the OOM killer, a crash) — it stops the run's processes and removes its containers, as `rl clean` does.
 * usage: reaper.ts <run dir> <grace ms>
 */
import { cleanRunDir } from "../clean.ts";

const [runDir, graceArg] = process.argv.slice(2);
if (!runDir) {
  process.stderr.write("usage: reaper.ts <run dir> <grace ms>\n");
  process.exit(2);
}
const graceMs = Number(graceArg ?? "10000");
let said = "";
for await (const chunk of Bun.stdin.stream()) said += new TextDecoder().decode(chunk);
if (said.includes("done\n")) process.exit(0);
const stamp = () => new Date().toISOString();
process.stderr.write(`${stamp()} the launcher of ${runDir} is gone; cleaning up\n`);
for (const action of await cleanRunDir(runDir, graceMs)) process.stderr.write(`${stamp()} ${action}\n`);
process.stderr.write(`${stamp()} done\n`);
process.exit(0);
