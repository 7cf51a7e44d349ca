import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BashSandbox } from "./bash-sandbox.ts";
import { ShellSetup } from "./shell-setup.ts";

let dir: string;
let sandbox: BashSandbox;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "air-shell-setup-"));
  sandbox = await BashSandbox.start(dir);
});
afterAll(async () => {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

test("ls classifies, and validate/submit inside a shell line leave a marker only this setup knows", async () => {
  const setup = new ShellSetup();
  await sandbox.exec(setup.script, 5000);
  await sandbox.exec("mkdir sub", 5000);
  expect((await sandbox.exec("ls", 5000)).output).toBe("sub/\n");
  const chained = await sandbox.exec("true && validate", 5000);
  expect(setup.evaluationCall(chained.output)).toBe("validate");
  expect(setup.evaluationCall((await sandbox.exec("echo x; submit", 5000)).output)).toBe("submit");
  expect(setup.evaluationCall((await sandbox.exec("false && validate", 5000)).output)).toBeUndefined();
  expect(new ShellSetup().evaluationCall(chained.output)).toBeUndefined();
});
