import { errorMessage } from "../errors.ts";
import type { PendingWork } from "../pending.ts";
import type { Trajectory, Turn } from "../types.ts";
import { applyRewards, type RewardEntry } from "./rewards.ts";
import { summarize } from "./stats.ts";

/** One node of a tree rollout: a segment of turns played in one env session (loop/tree.ts). */
export interface TreeNode {
  trajectory: Trajectory;
  parent?: TreeNode;
  children: TreeNode[];
}

/** The turns from the root to `node`, each with the node it belongs to. */
function pathOf(node: TreeNode): Array<{ turn: Turn; owner: TreeNode }> {
  const chain: TreeNode[] = [];
  for (let n: TreeNode | undefined = node; n; n = n.parent) chain.unshift(n);
  return chain.flatMap((owner) => owner.trajectory.turns.map((turn) => ({ turn, owner })));
}

/**
 * Scores each leaf's whole path with the reward entries. A leaf gets its path's return and breakdown; a turn gets
 * the per-turn reward its first scored path gave it (the same on every path for rewards that look back only);
 * an internal node's reward is the mean return of its leaves.
 * @example await scoreLeaves(deps, nodes); nodes[0].trajectory.reward; // the mean return of the tree's leaves
 */
export async function scoreLeaves(
  deps: { rewards: RewardEntry[]; pending: PendingWork; timeouts: { reward_ms: number } },
  nodes: TreeNode[],
): Promise<void> {
  const scored = new Set<Turn>();
  const returns = new Map<TreeNode, Array<{ total: number; breakdown: Record<string, number> }>>();
  for (const leaf of nodes) {
    const t = leaf.trajectory;
    if (leaf.children.length > 0 || t.stopReason === "failed") continue;
    const path = pathOf(leaf);
    const view: Trajectory = { ...t, turns: path.map((p) => ({ ...p.turn })), metrics: { ...t.metrics } };
    try {
      await applyRewards(view, deps.rewards, deps.pending, deps.timeouts.reward_ms);
    } catch (error) {
      t.stopReason = "failed";
      t.error = `reward: ${errorMessage(error)}`;
      continue;
    }
    t.reward = view.reward;
    t.rewardBreakdown = view.rewardBreakdown;
    t.metrics = view.metrics;
    for (const [i, { turn }] of path.entries()) {
      if (scored.has(turn)) continue;
      scored.add(turn);
      turn.reward = view.turns[i]?.reward;
      turn.rewardBreakdown = view.turns[i]?.rewardBreakdown;
    }
    for (let n: TreeNode | undefined = leaf; n; n = n.parent) {
      returns.set(n, [
        ...(returns.get(n) ?? []),
        { total: view.reward ?? 0, breakdown: view.rewardBreakdown ?? {} },
      ]);
    }
  }
  for (const node of nodes) {
    const below = returns.get(node) ?? [];
    node.trajectory.metrics["tree/leaves"] = below.length;
    if (node.children.length === 0) continue;
    node.trajectory.reward = summarize(below.map((r) => r.total)).mean;
    const keys = new Set(below.flatMap((r) => Object.keys(r.breakdown)));
    node.trajectory.rewardBreakdown = Object.fromEntries(
      [...keys].map((k) => [k, summarize(below.map((r) => r.breakdown[k] ?? 0)).mean]),
    );
  }
}

/**
 * Step metrics of tree rollouts: nodes, leaves, branch points, env steps (turns played), the leaves' returns, the
 * share of leaves whose path (root to leaf) never produced a score, and the time forks took.
 * @example Object.assign(batch.metrics, treeMetrics(trajectories)); // tree/leaves, tree/env_steps, ...
 */
export function treeMetrics(trajectories: Trajectory[]): Record<string, number> {
  const branched = trajectories.filter((t) => t.stopReason === "branched");
  const leaves = trajectories.filter((t) => t.stopReason !== "branched" && t.stopReason !== "failed");
  const forkMs = branched.map((t) => t.metrics["tree/fork_ms"] ?? 0);
  const metrics: Record<string, number> = {
    "tree/nodes": trajectories.length,
    "tree/leaves": leaves.length,
    "tree/branch_points": branched.length,
    "tree/env_steps": trajectories.reduce((a, t) => a + t.turns.length, 0),
  };
  // A leaf's rollout is its whole path: it produced a score if any turn from the root down did.
  const byId = new Map(trajectories.map((t) => [t.id, t]));
  const pathScored = (t: Trajectory | undefined): boolean =>
    t !== undefined &&
    (t.turns.some((x) => x.scores) || pathScored(t.parent && byId.get(t.parent.trajectoryId)));
  metrics["tree/leaf_no_score_frac"] = leaves.length
    ? leaves.filter((t) => !pathScored(t)).length / leaves.length
    : 0;
  const returns = summarize(leaves.map((t) => t.reward ?? 0));
  metrics["tree/leaf_reward/mean"] = returns.mean;
  metrics["tree/leaf_reward/std"] = returns.std;
  metrics["tree/fork_ms/mean"] = summarize(forkMs).mean;
  return metrics;
}
