import { expect, test } from "bun:test";
import { openStore } from "../open.ts";
import { runs, samples, trajectories, turns } from "../schema.ts";
import { groupNodes, treeGroupIds } from "./groups.ts";

test("groupNodes: a group's rows in recording order with parent links and mean sample advantage; treeGroupIds", () => {
  const db = openStore(":memory:");
  db.insert(runs).values({ name: "r", startedAt: 1 }).run();
  const row = (rolloutId: string, groupId: string, parentJson: string | null, runId = 1) => ({
    runId,
    rolloutId,
    step: 0,
    exampleId: "e",
    task: "t",
    groupId,
    status: "done",
    turnCount: 2,
    parentJson,
  });
  db.insert(trajectories)
    .values([
      row("root", "0:tree", null),
      row("kid", "0:tree", JSON.stringify({ trajectoryId: "root", turnIndex: 1 })),
      row("odd", "0:tree", JSON.stringify({ trajectoryId: 7, turnIndex: 1 })),
      row("bad", "0:tree", "{not json"),
      { ...row("live", "0:tree", null), status: "running", turnCount: 0 },
      row("flat", "0:flat", null),
      row("other-run", "0:other", JSON.stringify({ trajectoryId: "x", turnIndex: 0 }), 2),
    ])
    .run();
  db.insert(turns)
    .values(
      [0, 1, 2].map((idx) => ({
        runId: 1,
        rolloutId: "live",
        idx,
        promptMessagesJson: "[]",
        completion: "",
        observation: "",
      })),
    )
    .run();
  const sample = (rolloutId: string, groupId: string, advantageMean: number, step = 0) => ({
    runId: 1,
    step,
    rolloutId,
    groupId,
    tokens: 4,
    lossTokens: 2,
    advantageMean,
    advantageMin: advantageMean,
    advantageMax: advantageMean,
    policyVersion: 0,
  });
  db.insert(samples)
    .values([
      sample("kid", "0:tree", 0.25),
      sample("kid", "0:tree", 0.75),
      // Another group's and another step's samples of the same rollout id do not count.
      sample("kid", "0:flat", 9),
      sample("kid", "0:tree", 9, 3),
    ])
    .run();
  const nodes = groupNodes(db, 1, "0:tree");
  expect(nodes.map((n) => n.rolloutId)).toEqual(["root", "kid", "odd", "bad", "live"]);
  expect(nodes.map((n) => n.parent)).toEqual([
    null,
    { trajectoryId: "root", turnIndex: 1 },
    null,
    null,
    null,
  ]);
  expect(nodes[1]?.advantage).toBe(0.5);
  expect(nodes[1]?.samples).toBe(2);
  expect(nodes[0]?.advantage).toBeNull();
  expect(nodes.find((n) => n.rolloutId === "live")?.turnCount).toBe(3);
  expect(groupNodes(db, 1, "nope")).toEqual([]);
  expect([...treeGroupIds(db, 1, ["0:tree", "0:flat", "0:other", "0:tree"])]).toEqual(["0:tree"]);
  expect(treeGroupIds(db, 1, []).size).toBe(0);
});
