import { describe, expect, test } from "bun:test";
import { groupNodes, openStore, type StoreDb, tables } from "@air/logger-sqlite";
import { buildGroupTree, forkTurns, type GroupTree, pathTo } from "./tree.ts";

/** A node as the recorder stores it: id, parent id and fork turn, turns, stop reason, reward, sample advantage. */
interface Spec {
  id: string;
  parent?: [string, number];
  turns: number;
  stop?: string;
  reward?: number | null;
  advantage?: number;
}

function store(groups: Record<string, Spec[]>): StoreDb {
  const db = openStore(":memory:");
  db.insert(tables.runs).values({ name: "trees", startedAt: 1 }).run();
  for (const [groupId, specs] of Object.entries(groups)) {
    for (const s of specs) {
      const stop = s.stop ?? "done";
      db.insert(tables.trajectories)
        .values({
          runId: 1,
          rolloutId: s.id,
          step: 0,
          exampleId: groupId,
          task: "notebook",
          groupId,
          status: stop === "failed" ? "failed" : "done",
          stopReason: stop,
          reward: s.reward ?? null,
          turnCount: s.turns,
          parentJson: s.parent ? JSON.stringify({ trajectoryId: s.parent[0], turnIndex: s.parent[1] }) : null,
        })
        .run();
      if (s.advantage !== undefined)
        db.insert(tables.samples)
          .values({
            runId: 1,
            step: 0,
            rolloutId: s.id,
            groupId,
            tokens: 10,
            lossTokens: 4,
            advantageMean: s.advantage,
            advantageMin: s.advantage,
            advantageMax: s.advantage,
            policyVersion: 0,
          })
          .run();
    }
  }
  return db;
}

const tree = (db: StoreDb, group: string): GroupTree => {
  const built = buildGroupTree(groupNodes(db, 1, group));
  if (!built) throw new Error(`${group} is not a tree`);
  return built;
};
const node = (t: GroupTree, id: string) => {
  const n = t.nodes.get(id);
  if (!n) throw new Error(`no node ${id}`);
  return n;
};

describe("a group's tree from stored rows", () => {
  test("branching factor 2, two levels: children under their parent, turn ranges, values, sibling differences", () => {
    const db = store({
      "0:b2": [
        { id: "r", turns: 1, stop: "branched", reward: 0.375 },
        { id: "a", parent: ["r", 1], turns: 1, stop: "branched", reward: 0.5, advantage: 0.125 },
        { id: "b", parent: ["r", 1], turns: 1, stop: "branched", reward: 0.25, advantage: -0.125 },
        { id: "a1", parent: ["a", 2], turns: 2, reward: 1, advantage: 0.5 },
        { id: "a2", parent: ["a", 2], turns: 2, reward: 0, advantage: -0.5 },
        { id: "b1", parent: ["b", 2], turns: 2, reward: 0.25, advantage: 0 },
        { id: "b2", parent: ["b", 2], turns: 2, reward: 0.25, advantage: 0 },
      ],
    });
    const t = tree(db, "0:b2");
    expect(t.roots.map((r) => r.id)).toEqual(["r"]);
    expect(t.nodes.size).toBe(7);
    expect(t.leaves).toBe(4);
    expect(t.branchPoints).toBe(3);
    expect(t.orphans).toBe(0);
    const r = node(t, "r");
    expect(r.children.map((c) => c.id)).toEqual(["a", "b"]);
    expect(forkTurns(r)).toEqual([1]);
    expect(node(t, "a").children.map((c) => c.id)).toEqual(["a1", "a2"]);
    expect(forkTurns(node(t, "a"))).toEqual([2]);
    expect([r.firstTurn, r.lastTurn]).toEqual([0, 0]);
    expect([node(t, "a").firstTurn, node(t, "a").lastTurn]).toEqual([1, 1]);
    expect([node(t, "b2").firstTurn, node(t, "b2").lastTurn]).toEqual([2, 3]);
    expect(node(t, "b2").depth).toBe(2);
    expect(pathTo(node(t, "a2")).map((n) => n.id)).toEqual(["r", "a", "a2"]);
    // V: the mean of the leaves' returns under a node.
    expect(r.value).toBeCloseTo(0.375);
    expect(node(t, "a").value).toBeCloseTo(0.5);
    expect(node(t, "b").value).toBeCloseTo(0.25);
    // Each branch point's continuations against their mean.
    expect(node(t, "a").vsSiblings).toBeCloseTo(0.125);
    expect(node(t, "b").vsSiblings).toBeCloseTo(-0.125);
    expect(node(t, "a1").vsSiblings).toBeCloseTo(0.5);
    expect(node(t, "a2").vsSiblings).toBeCloseTo(-0.5);
    expect([node(t, "a").best, node(t, "b").best, node(t, "a1").best, node(t, "a2").best]).toEqual([
      true,
      false,
      true,
      false,
    ]);
    // Equal siblings: no winner.
    expect([node(t, "b1").best, node(t, "b2").best, node(t, "b1").vsSiblings]).toEqual([false, false, 0]);
    // A single root has no siblings to compare with (its difference to itself is 0).
    expect([r.best, r.vsSiblings]).toEqual([false, 0]);
    // The advantage each node was trained with, from its samples.
    expect(node(t, "a1").row.advantage).toBe(0.5);
    expect(node(t, "r").row.advantage).toBeNull();
  });

  test("branching factor 3, two levels, two roots: 1 + 3 + 9 nodes per root; a failed leaf has no return", () => {
    const specs: Spec[] = [];
    for (const root of ["p", "q"]) {
      specs.push({ id: root, turns: 1, stop: "branched" });
      for (const i of [1, 2, 3]) {
        const child = `${root}${i}`;
        specs.push({ id: child, parent: [root, 1], turns: 1, stop: "branched" });
        for (const j of [1, 2, 3])
          specs.push({
            id: `${child}${j}`,
            parent: [child, 2],
            turns: 1,
            ...(child === "q3" && j === 3 ? { stop: "failed" } : { reward: root === "p" ? i + j / 10 : 0 }),
          });
      }
    }
    const t = tree(store({ "0:b3": specs }), "0:b3");
    expect(t.roots.map((r) => r.id)).toEqual(["p", "q"]);
    expect(t.nodes.size).toBe(26);
    expect(t.leaves).toBe(18);
    expect(t.branchPoints).toBe(8);
    for (const root of t.roots) {
      expect(root.children).toHaveLength(3);
      for (const c of root.children) {
        expect(c.children).toHaveLength(3);
        expect(c.children.every((g) => g.depth === 2 && g.firstTurn === 2)).toBe(true);
      }
    }
    // p1's leaves return 1.1, 1.2, 1.3: V(p1) = 1.2; p2 = 2.2; p3 = 3.2; V(p) = 2.2.
    expect(node(t, "p1").value).toBeCloseTo(1.2);
    expect(node(t, "p").value).toBeCloseTo(2.2);
    expect(node(t, "p3").vsSiblings).toBeCloseTo(1);
    expect(node(t, "p3").best).toBe(true);
    expect(node(t, "p33").vsSiblings).toBeCloseTo(0.1);
    // The roots are siblings of each other: p (2.2) against q (0).
    expect(node(t, "p").vsSiblings).toBeCloseTo(1.1);
    expect(node(t, "q").vsSiblings).toBeCloseTo(-1.1);
    // The failed leaf counts in the tree but not in its parent's value.
    const failed = node(t, "q33");
    expect([failed.value, failed.vsSiblings]).toEqual([null, null]);
    expect(node(t, "q3").leafReturns).toEqual([0, 0]);
  });

  test("a parent that is not in the group: the node is shown as a root and marked; a cycle is cut", () => {
    const t = tree(
      store({
        "0:o": [
          { id: "root", turns: 1, stop: "branched" },
          { id: "kid", parent: ["root", 1], turns: 1, reward: 1 },
          { id: "lost", parent: ["gone", 3], turns: 2, reward: 0.5 },
          { id: "x", parent: ["y", 1], turns: 1, stop: "branched" },
          { id: "y", parent: ["x", 1], turns: 1, stop: "branched" },
          { id: "x1", parent: ["x", 2], turns: 1, reward: 0 },
          { id: "self", parent: ["self", 0], turns: 1, reward: 0 },
        ],
      }),
      "0:o",
    );
    expect(t.roots.map((r) => r.id).sort()).toEqual(["lost", "root", "self", "x"].sort());
    const lost = node(t, "lost");
    expect([lost.missingParent, lost.depth, lost.firstTurn, lost.lastTurn]).toEqual(["gone", 0, 3, 4]);
    expect(node(t, "self").missingParent).toBe("self");
    // x ← y ← x: cut at x, so y hangs under x with x1.
    expect(node(t, "x").missingParent).toBe("y");
    expect(node(t, "x").children.map((c) => c.id)).toEqual(["y", "x1"]);
    expect(t.orphans).toBe(3);
    expect(t.nodes.size).toBe(7);
    expect(node(t, "kid").parent?.id).toBe("root");
  });

  test("a flat group is not a tree", () => {
    const db = store({
      "0:flat": [
        { id: "f0", turns: 3, reward: 1, advantage: 0.5 },
        { id: "f1", turns: 2, reward: 0, advantage: -0.5 },
      ],
    });
    const rows = groupNodes(db, 1, "0:flat");
    expect(rows.map((r) => [r.rolloutId, r.parent, r.advantage])).toEqual([
      ["f0", null, 0.5],
      ["f1", null, -0.5],
    ]);
    expect(buildGroupTree(rows)).toBeNull();
    expect(buildGroupTree([])).toBeNull();
  });
});
