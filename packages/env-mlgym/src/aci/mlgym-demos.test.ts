import { expect, test } from "bun:test";
import { join } from "node:path";
import { loadMlgymAgent } from "./mlgym-agent.ts";
import { loadDemonstrations } from "./mlgym-demos.ts";

const ROOT = join(import.meta.dir, "../../fixtures/fake-mlgym");
const DEMO = ["demonstrations/demo.traj"];

test("one user message: the template around this agent's non-system entries joined by newlines", async () => {
  const messages = await loadDemonstrations(ROOT, {
    demonstrations: DEMO,
    demonstration_template: "<{demonstration}>",
  });
  expect(messages).toEqual([
    { role: "user", content: "<demo task\nDISCUSSION\nlook\n```\nls\n```\ndemo observation>" },
  ]);
});

test("put_demos_in_history: each entry its own message, roles kept, the template ignored", async () => {
  const messages = await loadDemonstrations(ROOT, {
    demonstrations: DEMO,
    put_demos_in_history: true,
    demonstration_template: "ignored {demonstration}",
  });
  expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  expect(messages[2]?.content).toBe("demo observation");
});

test("no demonstrations: none; a demonstration without a template, or a file without history: a clear error", async () => {
  expect(await loadDemonstrations(ROOT, {})).toEqual([]);
  await expect(loadDemonstrations(ROOT, { demonstrations: DEMO })).rejects.toThrow("demonstration_template");
  await expect(
    loadDemonstrations(ROOT, {
      demonstrations: ["configs/agents/default.yaml"],
      demonstration_template: "x",
    }),
  ).rejects.toThrow();
});

test("the agent config's demonstrations are loaded with it (paths relative to the checkout)", async () => {
  const agent = await loadMlgymAgent(ROOT, "configs/agents/with_demo.yaml");
  expect(agent.demonstrations).toHaveLength(1);
  expect(agent.demonstrations[0]?.content).toStartWith("--- DEMONSTRATION ---\ndemo task\n");
  expect((await loadMlgymAgent(ROOT)).demonstrations).toEqual([]);
});
