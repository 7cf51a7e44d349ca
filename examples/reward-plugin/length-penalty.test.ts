import { describe, expect, test } from "bun:test";
import { join, relative } from "node:path";
import { grpoAdvantage } from "@air/advantage-grpo";
import { runToml } from "@air/core/testing";
import { deltaReward } from "@air/reward-delta";
import { branching } from "@air/strategies";

const pluginFile = join(import.meta.dir, "length-penalty.ts");

/**
 * A one-step run with @air/core/testing's in-memory `guess` env (validate/submit a number, scored by rmse) and
 * `guesser` policy, air's grpo and branching, and the given `[[reward]]` sections.
 */
function config(rewards: string): string {
  return `
logger = []

[run]
name = "example"
output_dir = "out"
max_steps = 1

[orchestrator]
batch_size = 8
rollouts_per_example = 4
max_turns = 4

[env]
plugin = "guess"

[policy]
plugin = "guesser"
mode = "mixed"

[trainer]
plugin = "memory"

[advantage]
plugin = "grpo"

[strategy]
plugin = "branching"

${rewards}
`;
}

const plugins = [deltaReward, grpoAdvantage, branching];

describe("examples/reward-plugin/length-penalty.ts, named by path in a TOML", () => {
  test("runs through the loop, composed with delta by weight, breakdown kept per turn", async () => {
    let spec = "";
    const run = await runToml(
      (dir) => {
        spec = relative(dir, pluginFile);
        return config(
          [
            "[[reward]]",
            'plugin = "delta"',
            "[[reward]]",
            `plugin = "${spec}"`,
            'name = "length"',
            "weight = 0.5",
            "per_token = 0.01",
          ].join("\n"),
        );
      },
      { plugins },
    );
    expect(spec).toMatch(/^\.\.\/.*examples\/reward-plugin\/length-penalty\.ts$/);
    expect(run.summary).toMatchObject({ status: "completed", stepsCompleted: 1 });
    expect(run.trajectories.length).toBe(8);
    let parseErrors = 0;
    for (const t of run.trajectories) {
      let lengthTotal = 0;
      for (const turn of t.turns) {
        const penalty = -0.01 * turn.completionTokenIds.length - (turn.parseError ? 0.1 : 0);
        if (turn.parseError) parseErrors++;
        expect(turn.rewardBreakdown?.length).toBeCloseTo(penalty, 12);
        expect(turn.reward).toBeCloseTo(turn.rewardBreakdown!.delta! + 0.5 * penalty, 12);
        lengthTotal += penalty;
      }
      expect(t.rewardBreakdown?.length).toBeCloseTo(lengthTotal, 12);
      expect(t.reward).toBeCloseTo(t.rewardBreakdown!.delta! + 0.5 * lengthTotal, 12);
    }
    expect(parseErrors).toBeGreaterThan(0);
    const step = run.steps[0]!;
    expect(step.metrics["reward/mean"]).toBeCloseTo(
      run.trajectories.reduce((a, t) => a + t.reward!, 0) / run.trajectories.length,
      12,
    );
  });

  test("a wrong option of the user plugin is reported with its TOML path", async () => {
    const run = runToml(
      (dir) => config(`[[reward]]\nplugin = "${relative(dir, pluginFile)}"\nper_tokn = 0.1`),
      {
        plugins,
      },
    );
    await expect(run).rejects.toThrow(/reward\[0\]\.per_tokn: unknown key/);
  });
});
