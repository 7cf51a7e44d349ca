import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { groupNodes, openStore, tables } from "@air/logger-sqlite";
import { createApp, type VizApp } from "./app.ts";
import { runTreeFixture } from "./test-tree.ts";
import { buildGroupTree } from "./tree.ts";

const EVIL = "<img src=x onerror=alert(1)>";
let dir: string;
let app: VizApp;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "air-viz-tree-"));
  const run = await runTreeFixture({ dir, maxSteps: 2 });
  expect(run.summary.status).toBe("completed");
  const writer = openStore(run.dbPath);
  const row = (rolloutId: string, groupId: string, parent?: [string, number]) => ({
    runId: 1,
    rolloutId,
    step: 9,
    exampleId: "x",
    task: "notebook",
    groupId,
    status: "done",
    stopReason: "done",
    reward: 1,
    turnCount: 1,
    parentJson: parent ? JSON.stringify({ trajectoryId: parent[0], turnIndex: parent[1] }) : null,
  });
  writer
    .insert(tables.trajectories)
    .values([
      row("flat-a", "9:flat"),
      { ...row("flat-b", "9:flat"), reward: 0 },
      // Hand-made rows with markup in every id and a parent that is not stored.
      { ...row(`root${EVIL}`, `9:${EVIL}`), stopReason: "branched" },
      { ...row(`kid${EVIL}`, `9:${EVIL}`, [`root${EVIL}`, 1]), error: EVIL },
      row("orphan", `9:${EVIL}`, [`gone${EVIL}`, 2]),
    ])
    .run();
  writer.$client.close();
  app = createApp(run.dbPath);
}, 60_000);
afterAll(() => {
  app?.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = async (path: string) => {
  const res = await app.request(path);
  return { status: res.status, text: await res.text() };
};
const count = (text: string, re: RegExp) => (text.match(re) ?? []).length;

describe("tree rollouts on the dashboard", () => {
  test("the stored advantages are the sibling differences the tree view shows (a real tree run)", () => {
    for (const group of ["0:nb0", "1:nb0"]) {
      const tree = buildGroupTree(groupNodes(app.db, 1, group));
      expect(tree?.nodes.size).toBe(14);
      expect(tree?.roots).toHaveLength(2);
      let compared = 0;
      for (const n of tree?.nodes.values() ?? []) {
        expect(n.row.advantage).not.toBeNull();
        expect(n.row.advantage as number).toBeCloseTo(n.vsSiblings as number, 9);
        compared++;
      }
      expect(compared).toBe(14);
    }
  });

  test("group page: roots, branch points with their continuations compared, nested children, links", async () => {
    const r = await get(`/runs/1/groups/${encodeURIComponent("0:nb0")}`);
    expect(r.status).toBe(200);
    expect(r.text).toContain("14 nodes · 8 leaves · 6 branch points");
    expect(count(r.text, /<li class="node/g)).toBe(14);
    expect(count(r.text, /data-depth="2"/g)).toBe(8);
    // The roots table and one table per branch point.
    expect(count(r.text, /<table class="siblings">/g)).toBe(7);
    expect(count(r.text, /branch point: forked at turn 1 into\s+2 continuations/g)).toBe(2);
    expect(count(r.text, /branch point: forked at turn 2 into\s+2 continuations/g)).toBe(4);
    // Every node links to its trajectory page; a leaf shows its turns.
    expect(r.text).toContain('href="/runs/1/trajectories/s0-r13"');
    expect(r.text).toMatch(/>s0-r13<\/a> · turns 2–3 ·/);
    // A winner at each branch point whose continuations differ.
    const tree = buildGroupTree(groupNodes(app.db, 1, "0:nb0"));
    const best = [...(tree?.nodes.values() ?? [])].filter((n) => n.best);
    expect(best.length).toBeGreaterThan(0);
    for (const n of best) expect(r.text).toContain(`<tr data-node="${n.id}" class="best">`);
  });

  test("a node's trajectory page: the path from the root, its parent, siblings and children", async () => {
    const tree = buildGroupTree(groupNodes(app.db, 1, "0:nb0"));
    const leaf = [...(tree?.nodes.values() ?? [])].find((n) => n.depth === 2);
    if (!leaf?.parent?.parent) throw new Error("no leaf at depth 2");
    const parent = leaf.parent;
    const root = parent.parent as NonNullable<typeof parent.parent>;
    const r = await get(`/runs/1/trajectories/${leaf.id}`);
    expect(r.status).toBe(200);
    expect(r.text).toContain("<h2>Tree rollout</h2>");
    expect(r.text).toContain(`href="/runs/1/groups/0%3Anb0"`);
    expect(r.text).toMatch(
      new RegExp(
        `href="/runs/1/trajectories/${root.id}">${root.id}</a> → <span class="fork">forked at turn 1</span> → ` +
          `<a href="/runs/1/trajectories/${parent.id}">${parent.id}</a> → <span class="fork">forked at turn 2</span> → <strong>${leaf.id}</strong>`,
      ),
    );
    expect(r.text).toContain(
      `<a rel="parent" href="/runs/1/trajectories/${parent.id}">${parent.id}</a>,\n          forked at turn 2`,
    );
    expect(r.text).toMatch(new RegExp(`<tr data-node="${leaf.id}" class="(best )?current">`));
    for (const s of parent.children) expect(r.text).toContain(`<tr data-node="${s.id}"`);
    // Its first turn's prompt is the history up to the fork, not a rewritten one.
    expect(count(r.text, /prompt \(the history this node continues from its parent\)/g)).toBe(1);
    expect(r.text).not.toContain("history was rewritten");
    // The root's page lists its children and the other root.
    const rootPage = await get(`/runs/1/trajectories/${root.id}`);
    expect(rootPage.text).toContain("A root of the tree.");
    expect(rootPage.text).toContain("Children (branched at turn 1)");
    for (const c of root.children) expect(rootPage.text).toContain(`<tr data-node="${c.id}"`);
  });

  test("the trajectory list links a tree's nodes to their tree; flat groups stay flat", async () => {
    const list = await get("/runs/1/trajectories?per=200");
    expect(count(list.text, /class="tree-link" href="\/runs\/1\/groups\/0%3Anb0"/g)).toBe(14);
    expect(count(list.text, /class="tree-link"/g)).toBe(28 + 3);
    expect(list.text).not.toMatch(/class="tree-link" href="\/runs\/1\/groups\/9%3Aflat"/);
    const flat = await get(`/runs/1/groups/${encodeURIComponent("9:flat")}`);
    expect(flat.status).toBe(200);
    expect(flat.text).toContain("2 rollouts (flat: no tree)");
    expect(flat.text).not.toContain('class="tree');
    expect(flat.text).toMatch(/>flat-a<\/a><\/td>[\s\S]*?<td>1<\/td><td>1<\/td>\s*<td>\+0\.5000<\/td>/);
    const flatPage = await get("/runs/1/trajectories/flat-a");
    expect(flatPage.text).not.toContain("Tree rollout");
    expect(flatPage.text).toContain('href="/runs/1/groups/9%3Aflat"');
    expect((await get("/runs/1/groups/nope")).status).toBe(404);
  });

  test("markup in ids and errors is escaped; a parent that is not stored is marked", async () => {
    const r = await get(`/runs/1/groups/${encodeURIComponent(`9:${EVIL}`)}`);
    expect(r.status).toBe(200);
    expect(r.text).not.toContain("<img src=x");
    expect(r.text).toContain("kid&lt;img src=x onerror=alert(1)&gt;");
    expect(r.text).toContain("parent gone&lt;img src=x onerror=alert(1)&gt; is not in this group");
    expect(r.text).toContain("1 node(s) whose parent is not stored here");
    const kid = await get(`/runs/1/trajectories/${encodeURIComponent(`kid${EVIL}`)}`);
    expect(kid.status).toBe(200);
    expect(kid.text).not.toContain("<img src=x");
    expect(kid.text).toContain("Tree rollout");
    const orphan = await get("/runs/1/trajectories/orphan");
    expect(orphan.text).toContain(
      "Its parent gone&lt;img src=x onerror=alert(1)&gt; is not stored in this group.",
    );
  });
});
