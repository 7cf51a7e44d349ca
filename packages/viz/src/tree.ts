import type { GroupNodeRow } from "@air/logger-sqlite/read";

/** One node of a tree rollout as the dashboard shows it, built from its stored row. */
export interface TreeNode {
  row: GroupNodeRow;
  id: string;
  parent?: TreeNode;
  children: TreeNode[];
  /** 0 for a root (and an orphan, shown as a root). */
  depth: number;
  /** Index of the node's first turn: the turn its parent branched at (0 for a root). */
  firstTurn: number;
  /** Index of its last turn; null when it played none (it forked before its first turn). */
  lastTurn: number | null;
  /** The parent the row names when that parent is not stored in the group (or would close a cycle). */
  missingParent?: string;
  /** Returns of the finished leaves under it (a leaf: its own); failed, running and unscored leaves have none. */
  leafReturns: number[];
  /** V(node): the mean of `leafReturns`; null when it has none. */
  value: number | null;
  /** V(node) − the mean V of its valued siblings (itself included): the sibling term of the tree advantage. */
  vsSiblings: number | null;
  /** Highest V among its valued siblings, when they differ (a shared top value: each of them). */
  best: boolean;
}

/** A group's tree rollout: its roots (orphans among them) and every node by rollout id. */
export interface GroupTree {
  roots: TreeNode[];
  nodes: Map<string, TreeNode>;
  /** Nodes without children. */
  leaves: number;
  /** Nodes with children. */
  branchPoints: number;
  /** Nodes whose stored parent is not in the group. */
  orphans: number;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** A leaf's return counts when it finished and was scored (core leaves failed leaves out of the advantages). */
function ownReturn(row: GroupNodeRow): number[] {
  if (row.stopReason === "branched" || row.status !== "done" || row.reward === null) return [];
  return Number.isFinite(row.reward) ? [row.reward] : [];
}

/**
 * Rebuilds a group's tree rollout from its stored rows (logger-sqlite's `groupNodes`): children hang from the
 * node their `parent` names, values are recomputed from the leaves as core's tree advantage does (V = the mean
 * return of the finished leaves under a node), and each set of siblings — the children of one branch point, or
 * the roots of the group — is compared: `vsSiblings` = V − mean V of the siblings. A node whose parent is not in
 * the group (or whose parent links form a cycle) is shown as a root with `missingParent` set. Returns null for a
 * flat group (no row has a parent).
 * @example const tree = buildGroupTree(groupNodes(db, 1, "0:nb0")); tree?.roots[0]?.children.length;
 */
export function buildGroupTree(rows: GroupNodeRow[]): GroupTree | null {
  if (!rows.some((r) => r.parent)) return null;
  const nodes = new Map<string, TreeNode>();
  for (const row of rows) {
    if (nodes.has(row.rolloutId)) continue;
    nodes.set(row.rolloutId, {
      row,
      id: row.rolloutId,
      children: [],
      depth: 0,
      firstTurn: row.parent?.turnIndex ?? 0,
      lastTurn: null,
      leafReturns: [],
      value: null,
      vsSiblings: null,
      best: false,
    });
  }
  const roots: TreeNode[] = [];
  for (const node of nodes.values()) {
    const parentId = node.row.parent?.trajectoryId;
    const parent = parentId === undefined ? undefined : nodes.get(parentId);
    if (parentId !== undefined && (!parent || parent === node)) node.missingParent = parentId;
    if (parent && parent !== node) {
      node.parent = parent;
      parent.children.push(node);
    } else roots.push(node);
  }
  // Nodes not reachable from a root hang from a cycle of parent links: cut each cycle at a node on it.
  const reached = new Set<TreeNode>();
  const walk = (n: TreeNode, depth: number) => {
    reached.add(n);
    n.depth = depth;
    for (const c of n.children) walk(c, depth + 1);
  };
  for (const r of roots) walk(r, 0);
  for (const node of nodes.values()) {
    if (reached.has(node)) continue;
    const seen = new Set<TreeNode>();
    let onCycle = node;
    while (!seen.has(onCycle)) {
      seen.add(onCycle);
      onCycle = onCycle.parent as TreeNode;
    }
    const parent = onCycle.parent as TreeNode;
    parent.children = parent.children.filter((c) => c !== onCycle);
    onCycle.parent = undefined;
    onCycle.missingParent = parent.id;
    roots.push(onCycle);
    walk(onCycle, 0);
  }
  const collect = (n: TreeNode): number[] => {
    n.leafReturns = n.children.length === 0 ? ownReturn(n.row) : n.children.flatMap(collect);
    n.value = n.leafReturns.length ? mean(n.leafReturns) : null;
    n.lastTurn = n.row.turnCount > 0 ? n.firstTurn + n.row.turnCount - 1 : null;
    return n.leafReturns;
  };
  for (const r of roots) collect(r);
  compareSiblings(roots);
  for (const n of nodes.values()) compareSiblings(n.children);
  const all = [...nodes.values()];
  return {
    roots,
    nodes,
    leaves: all.filter((n) => n.children.length === 0).length,
    branchPoints: all.filter((n) => n.children.length > 0).length,
    orphans: all.filter((n) => n.missingParent !== undefined).length,
  };
}

function compareSiblings(siblings: TreeNode[]): void {
  const valued = siblings.filter((s) => s.value !== null);
  if (valued.length === 0) return;
  const values = valued.map((s) => s.value as number);
  const baseline = mean(values);
  const top = Math.max(...values);
  const bottom = Math.min(...values);
  for (const s of valued) {
    s.vsSiblings = (s.value as number) - baseline;
    s.best = top > bottom && s.value === top;
  }
}

/**
 * The nodes from the root down to `node` (itself last).
 * @example pathTo(tree.nodes.get("s0-r5")!).map((n) => n.id); // ["s0-r0", "s0-r2", "s0-r5"]
 */
export function pathTo(node: TreeNode): TreeNode[] {
  const path: TreeNode[] = [];
  for (let n: TreeNode | undefined = node; n; n = n.parent) path.unshift(n);
  return path;
}

/**
 * The turn indices a branch point's children started at (normally one: where it forked).
 * @example forkTurns(root); // [1]
 */
export function forkTurns(node: TreeNode): number[] {
  return [...new Set(node.children.map((c) => c.firstTurn))].sort((a, b) => a - b);
}
