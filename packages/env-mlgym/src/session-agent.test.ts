import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BashSandbox } from "./aci/bash-sandbox.ts";
import { loadMlgymAgent, type MlgymAgent } from "./aci/mlgym-agent.ts";
import { commandTimeouts } from "./command-timeouts.ts";
import { mlgymConfigSchema } from "./config.ts";
import { oneSandboxRuntime, parityTask } from "./parity/kit.ts";
import { MlgymSession } from "./session.ts";

// MLGym agent behaviour in a session: format errors, command timeouts, demonstrations.
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A session over a plain bash in a temporary workspace; with `agent`, MLGym's tools (`aci = "mlgym"`). */
async function session(agent?: MlgymAgent): Promise<MlgymSession> {
  const root = mkdtempSync(join(tmpdir(), "air-session-agent-"));
  roots.push(root);
  const workspace = join(realpathSync(root), "workspace");
  mkdirSync(workspace);
  const sandbox = await BashSandbox.start(workspace, root);
  const runtime = oneSandboxRuntime(sandbox);
  const config = mlgymConfigSchema.parse({ tasks: ["parity"], runtime: "local", max_steps: 10 });
  return new MlgymSession(runtime, sandbox, parityTask(workspace), {
    config,
    python: "python3",
    mlgymAgent: agent,
  });
}

const fakeAgent = () => loadMlgymAgent(join(import.meta.dir, "../fixtures/fake-mlgym"));

test('aci = "mlgym": the policy re-asks with the checkout\'s format error; a reply still malformed ends the episode (exit_format)', async () => {
  const agent = await fakeAgent();
  const s = await session(agent);
  try {
    expect(s.formatErrorMessage).toBe(agent.formatErrorTemplate as string);
    expect(s.formatErrorMessage).toContain("Bad reply.");
    const r = await s.step({ text: "no command", parseError: "no ``` command block found" });
    expect(r.done).toBe(true);
    expect(r.kind).toBe("auto_submit");
    expect(r.info).toEqual({ exit: "exit_format" });
    expect((await s.step({ text: "ls", command: "ls" })).observation).toBe("The episode has ended.");
  } finally {
    await s.close();
  }
});

test("air's own commands: no env wording for re-asks; a malformed reply costs a step and the episode goes on", async () => {
  const s = await session();
  try {
    expect(s.formatErrorMessage).toBeUndefined();
    const r = await s.step({ text: "no command", parseError: "no ``` command block found" });
    expect(r.done).toBe(false);
    expect(r.info).toEqual({ formatError: true });
    expect(r.observation).toContain("no ``` command block found");
  } finally {
    await s.close();
  }
});

test("command timeouts: MLGym's 25 s and 'contains python' with its tools, air's 60 s and invocations otherwise, the config's over both", () => {
  const mlgym = commandTimeouts({}, true);
  expect(mlgym.commandTimeoutS).toBe(25);
  expect(mlgym.trainingCommand.test("cat notes_about_python.txt")).toBe(true);
  const air = commandTimeouts({}, false);
  expect(air.commandTimeoutS).toBe(60);
  expect(air.trainingCommand.test("cat notes_about_python.txt")).toBe(false);
  expect(air.trainingCommand.test("python train.py")).toBe(true);
  const set = commandTimeouts({ command_timeout_s: 7, training_command: "^make" }, true);
  expect(set.commandTimeoutS).toBe(7);
  expect(set.trainingCommand.test("make all")).toBe(true);
});

test("start(): the system prompt, the agent config's demonstrations, then the task (MLGym's order)", async () => {
  const agent = await loadMlgymAgent(
    join(import.meta.dir, "../fixtures/fake-mlgym"),
    "configs/agents/with_demo.yaml",
  );
  const s = await session(agent);
  try {
    const messages = await s.start();
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "user"]);
    expect(messages[1]?.content).toStartWith("--- DEMONSTRATION ---");
    expect(messages[2]?.content).toStartWith("parity kit\n(Current Step: 0");
  } finally {
    await s.close();
  }
});

test("aci = \"mlgym\": replies are read by the agent config's output parser (MLGym's), an unknown parser leaves it to the policy", async () => {
  const agent = await fakeAgent();
  const fake = await session(agent);
  const mlgym = await session({ ...agent, outputParser: "MLGymThoughtActionParser" });
  try {
    expect(fake.parseReply).toBeUndefined();
    const read = mlgym.parseReply as (text: string) => { command?: string; parseError?: string };
    expect(read("DISCUSSION\nx\n```\nls\n```").command).toBe("ls\n");
    expect(read("```\nls\n```\n```\npwd\n```").parseError).toBe(
      "Found more than one code block in the model response.",
    );
    // an empty command runs (as in MLGym) instead of ending the episode
    const empty = await mlgym.step({ text: "```\n```", command: "" });
    expect(empty.done).toBe(false);
  } finally {
    await fake.close();
    await mlgym.close();
  }
});
