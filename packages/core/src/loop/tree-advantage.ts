import type { AdvantageEstimator } from "../plugin.ts";
import type { Group, Trajectory } from "../types.ts";
import { summarize } from "./stats.ts";
import type { TreeConfig } from "./tree-config.ts";

/** The tree of one group: nodes by id, children by parent id, the leaves under each node and its value. */
export interface TreeShape {
  /** Children of each node id; the roots are under "". */
  children: Map<string, Trajectory[]>;
  /** Returns of the leaves under each node (a leaf: its own return). */
  leafReturns: Map<string, number[]>;
  /** V(node): the mean return of the leaves under it (nodes with no leaf left have none). */
  value: Map<string, number>;
}

/** The parent id a node hangs from ("" for a root, or when its parent is not in the group). */
function parentKey(t: Trajectory, ids: Set<string>): string {
  const id = t.parent?.trajectoryId;
  return id !== undefined && ids.has(id) ? id : "";
}

/**
 * Rebuilds a group's tree from its trajectories' `parent` links. A leaf (a node without children) carries its
 * return — the reward of its whole path from the root — in `reward`.
 * @example const { value } = treeShape(group.trajectories); value.get(rootId); // mean return of its leaves
 */
export function treeShape(nodes: Trajectory[]): TreeShape {
  const ids = new Set(nodes.map((t) => t.id));
  const children = new Map<string, Trajectory[]>();
  for (const t of nodes) {
    const key = parentKey(t, ids);
    children.set(key, [...(children.get(key) ?? []), t]);
  }
  const leafReturns = new Map<string, number[]>();
  const collect = (t: Trajectory): number[] => {
    const kids = children.get(t.id) ?? [];
    // A branch point whose children all left the group (failed, `failed_groups = "keep"`) has no return.
    const own = t.stopReason === "branched" ? [] : [t.reward ?? 0];
    const returns = kids.length === 0 ? own : kids.flatMap(collect);
    leafReturns.set(t.id, returns);
    return returns;
  };
  for (const root of children.get("") ?? []) collect(root);
  const value = new Map<string, number>();
  for (const [id, returns] of leafReturns) if (returns.length) value.set(id, summarize(returns).mean);
  return { children, leafReturns, value };
}

/**
 * Advantages per branch point. Each node's turns get one advantage:
 *
 *     A(n) = [ V(n) − mean_{s ∈ siblings(n)} V(s) ]  +  w · [ V(n) − V(all leaves) ]      (then ÷ √|L(n)| if asked)
 *
 * V(n) is the mean return of the leaves under n. The first term compares a continuation with its siblings — the
 * children of the same branch point (TreePO's sibling sub-group baseline; TreeRL's local term V(n) − V(parent),
 * equal to it when siblings have equally many leaves) — and sums to zero over every sibling set. The second is
 * TreeRL's global term (weight `global_weight`, default 0); `sqrt_leaves` applies TreeRL's 1/√|L(n)|. The roots
 * of an example are siblings of each other, so with `roots = rollouts_per_example` and no branching this is
 * GRPO's mean baseline without std scaling.
 * @example const { values } = treeAdvantage({ global_weight: 0, sqrt_leaves: false }).compute(groups);
 */
export function treeAdvantage(config: Pick<TreeConfig, "global_weight" | "sqrt_leaves">): AdvantageEstimator {
  return {
    compute(groups: Group[]) {
      const all: number[] = [];
      let siblingSets = 0;
      let zeroVarianceSets = 0;
      const values = groups.map((group) => {
        const shape = treeShape(group.trajectories);
        const rootValue = summarize(group.trajectories.filter(isLeaf(shape)).map((t) => t.reward ?? 0)).mean;
        const advantage = new Map<string, number>();
        for (const siblings of shape.children.values()) {
          const valued = siblings.filter((s) => shape.value.has(s.id));
          if (valued.length === 0) continue;
          const vs = valued.map((s) => shape.value.get(s.id) as number);
          const baseline = summarize(vs).mean;
          if (valued.length > 1) {
            siblingSets++;
            if (new Set(vs).size <= 1) zeroVarianceSets++;
          }
          for (const [i, s] of valued.entries()) {
            const v = vs[i] as number;
            let a = v - baseline + config.global_weight * (v - rootValue);
            if (config.sqrt_leaves) a /= Math.sqrt(shape.leafReturns.get(s.id)?.length ?? 1);
            advantage.set(s.id, a);
          }
        }
        return group.trajectories.map((t) => {
          const a = advantage.get(t.id) ?? 0;
          for (const _ of t.turns) all.push(a);
          return t.turns.map(() => a);
        });
      });
      const s = summarize(all); // over every turn's advantage, as advantage-grpo reports it
      return {
        values,
        metrics: {
          mean: s.mean,
          std: s.std,
          min: s.min,
          max: s.max,
          sibling_sets: siblingSets,
          sibling_zero_variance_frac: siblingSets ? zeroVarianceSets / siblingSets : 0,
        },
      };
    },
  };
}

function isLeaf(shape: TreeShape): (t: Trajectory) => boolean {
  return (t) => (shape.children.get(t.id) ?? []).length === 0;
}
