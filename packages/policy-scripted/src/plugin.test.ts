import { describe, expect, test } from "bun:test";
import { runToml } from "@air/core/testing";
import { createScriptedPolicy, scriptedConfigSchema, scriptedPolicyPlugin } from "./plugin.ts";

const signal = new AbortController().signal;

describe("scripted policy", () => {
  test("replays commands per turn, then `after`", async () => {
    const policy = createScriptedPolicy(
      scriptedConfigSchema.parse({ commands: ["ls", "edit 1:1\nx\nend_of_edit"] }),
    );
    const at = (turnIndex: number) => policy.generate({ messages: [], rolloutId: "r", turnIndex, signal });
    expect((await at(0)).action).toEqual({ text: "ls", command: "ls" });
    expect((await at(1)).action.command).toBe("edit 1:1\nx\nend_of_edit");
    expect((await at(2)).action.command).toBe("submit");
    const g = await at(0);
    expect(g.completionTokenIds).toEqual([108, 115]);
    expect(g.completionLogprobs).toEqual([0, 0]);
  });

  test("a task's own list, learnt from rollout:start, wins over `commands`", async () => {
    const policy = createScriptedPolicy(
      scriptedConfigSchema.parse({ commands: ["ls"], tasks: { rps: ["validate"] }, after: "noop" }),
    );
    await policy.hooks?.["rollout:start"]?.({
      rolloutId: "a",
      exampleId: "rps",
      task: "rps",
      groupId: "g",
      step: 0,
      policyVersion: 0,
      attempt: 0,
    });
    const gen = (rolloutId: string, turnIndex: number) =>
      policy.generate({ messages: [], rolloutId, turnIndex, signal });
    expect((await gen("a", 0)).action.command).toBe("validate");
    expect((await gen("a", 1)).action.command).toBe("noop");
    expect((await gen("b", 0)).action.command).toBe("ls");
  });

  test("other keys (an openai section switched with --policy.plugin scripted) are dropped", () => {
    expect(scriptedConfigSchema.parse({ base_url: "http://x", commands: ["ls"] })).toEqual({
      commands: ["ls"],
      tasks: {},
      after: "submit",
    });
  });

  test("drives a whole run through core's loop", async () => {
    const run = await runToml(
      {
        logger: [],
        run: { name: "scripted", max_steps: 1 },
        orchestrator: { batch_size: 1, rollouts_per_example: 1, max_turns: 4 },
        env: { plugin: "notebook" },
        policy: { plugin: "scripted", tasks: { notebook: ["write a", "write b", "ls", "submit"] } },
        trainer: { plugin: "memory" },
        advantage: { plugin: "mean" },
        strategy: { plugin: "per-turn" },
        reward: { plugin: "last-score" },
      },
      { plugins: [scriptedPolicyPlugin] },
    );
    const [trajectory] = run.trajectories;
    expect(trajectory?.turns.map((t) => t.observation)).toEqual([
      "wrote a (step 1)",
      "wrote b (step 2)",
      "a b",
      "score 2",
    ]);
  });
});
