import type { Trajectory } from "../types.ts";
import { type TreeDeps, TreeGrowth, type TreeInput } from "./tree-grow.ts";
import { resumeTree } from "./tree-resume.ts";
import { scoreLeaves } from "./tree-score.ts";

export type { TreeDeps, TreeInput } from "./tree-grow.ts";

/**
 * Tree rollouts of one example (`[orchestrator.tree]`): `roots` episodes start fresh; when a node reaches a branch
 * turn and the example has leaves to spare, its session is forked (`EnvSession.fork`) into `branching_factor`
 * sessions and each continues as a child node from the same messages. A node's trajectory holds its own turns
 * only (`parent` names the node it continues and the index of its first turn), so shared turns are trained once
 * and a child's samples carry the shared history as prompt tokens. Once every leaf ended, each leaf's whole path
 * (root → leaf) is scored by the reward entries: a leaf's `reward` is its path's return, an internal node's the
 * mean return of the leaves under it (its value). Every node emits rollout:start, turn:end and rollout:end.
 * A node whose env or policy fails ends as a failed leaf (no retries: its state cannot be replayed).
 * With `input.recorded` (`rl --resume`) the trees are rebuilt from the store's nodes first (loop/tree-resume.ts).
 * @example const nodes = await growTree(deps, { example, groupId: "0:a", step: 0, nextId: () => `s0-r${n++}` });
 */
export async function growTree(deps: TreeDeps, input: TreeInput): Promise<Trajectory[]> {
  const growth = new TreeGrowth(deps, input);
  if (input.recorded?.length) await resumeTree(growth, input.recorded);
  else await Promise.all(Array.from({ length: deps.tree.roots }, () => growth.growRoot()));
  await scoreLeaves(deps, growth.nodes);
  for (const node of growth.nodes) await deps.bus.emit("rollout:end", { trajectory: node.trajectory });
  return growth.nodes.map((n) => n.trajectory);
}
