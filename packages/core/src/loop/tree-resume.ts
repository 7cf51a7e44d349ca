import { errorMessage } from "../errors.ts";
import type { EnvSession } from "../plugin.ts";
import type { Message, Turn } from "../types.ts";
import { type RecordedRollout, resumedMessages, versionsOf } from "./resume.ts";
import type { TreeGrowth } from "./tree-grow.ts";
import type { TreeNode } from "./tree-score.ts";

/** A node the store recorded, with its recorded children; `rollout` is unset for a root rebuilt from its children. */
interface Recorded {
  id: string;
  rollout: RecordedRollout | undefined;
  /** Index of its first turn (its parent's branch turn; 0 for a root). */
  first: number;
  children: Recorded[];
}

/** What a rebuilt node does next: play on in a restored session, or stay as recorded (its rollout:start only). */
type Work =
  | { node: TreeNode; session: EnvSession; messages: Message[]; start: number; resumedAt?: number }
  | { node: TreeNode; session?: undefined; recorded: boolean };

/** Why a recorded tree cannot be rebuilt: it starts over. */
class TreeRestart extends Error {}

/**
 * `rl --resume` of one example's trees from the nodes the store recorded (`recorded`, each with its parent link,
 * turns and last resume point): nodes that ended (branched, or a finished leaf) are taken as recorded; a node in
 * flight continues after its last turn in `Environment.restore`'s session; children the kill caught before their
 * first turn are forked again from their parent's branch point (its recorded state), and branch points not yet
 * reached fork as usual. The leaf budget counts the recorded branch points. A node whose state cannot be restored
 * starts over from its parent's branch point, or, when that state is gone too (or it is a root), its whole tree
 * starts over under the root's id — each with a warning naming it. Missing roots grow fresh.
 * Sessions are restored before the nodes take their rollout slots (at most the nodes that were in flight).
 * @example await resumeTree(growth, recordedOfGroup); // growth.nodes: the rebuilt trees, every node played out
 */
export async function resumeTree(g: TreeGrowth, recorded: RecordedRollout[]): Promise<void> {
  const { deps, input } = g;
  const roots = recordedTrees(g, recorded);
  const work: Work[] = [];
  const restarted: string[] = [];
  for (const root of roots) {
    const nodesBefore = g.nodes.length;
    const leavesBefore = g.leaves;
    const own: Work[] = [];
    try {
      await rebuild(g, root, undefined, undefined, own);
      work.push(...own);
    } catch (error) {
      for (const w of own) if (w.session) await g.close(w.node.trajectory.id, w.session);
      g.nodes.splice(nodesBefore);
      g.leaves = leavesBefore;
      g.spareIds.push(...idsOf(root).filter((id) => id !== root.id));
      restarted.push(root.id);
      deps.log.warn(`tree ${root.id} (${input.example.id}) starts over: ${errorMessage(error)}`);
    }
  }
  const fresh = Math.max(0, deps.tree.roots - roots.length);
  await Promise.all([
    ...work.map(async (w) => {
      if (!w.session) {
        await g.emitStart(w.node, w.node.trajectory.turns.length);
        if (w.recorded) await g.dropRecordedState(w.node.trajectory.id);
        return;
      }
      const release = await deps.slot();
      return g.play(w.node, w.session, w.messages, w.start, release, w.resumedAt);
    }),
    ...restarted.map((id) => g.growRoot(id)),
    ...Array.from({ length: fresh }, () => g.growRoot()),
  ]);
  // recorded nodes no node took up again (a tree grown again with fewer nodes): their states go too
  for (const id of g.spareIds.splice(0)) await g.dropRecordedState(id);
}

/**
 * The recorded trees' roots. A root that branched before its first turn has no turns, so the store kept no row of
 * it: it is rebuilt from its children. Nodes whose parent is not recorded cannot be placed: their ids go spare.
 */
function recordedTrees(g: TreeGrowth, recorded: RecordedRollout[]): Recorded[] {
  const all = new Map<string, Recorded>();
  for (const r of recorded)
    all.set(r.rolloutId, { id: r.rolloutId, rollout: r, first: r.parent?.turnIndex ?? 0, children: [] });
  for (const r of recorded) {
    const p = r.parent;
    if (p && p.turnIndex === 0 && !all.has(p.trajectoryId))
      all.set(p.trajectoryId, { id: p.trajectoryId, rollout: undefined, first: 0, children: [] });
  }
  const roots: Recorded[] = [];
  for (const n of all.values()) {
    const p = n.rollout?.parent;
    if (!p) roots.push(n);
    else all.get(p.trajectoryId)?.children.push(n);
  }
  const kept = roots.slice(0, g.deps.tree.roots);
  const placed = new Set(kept.flatMap(idsOf));
  const lost = [...all.keys()].filter((id) => !placed.has(id));
  if (lost.length > 0) {
    g.spareIds.push(...lost);
    g.deps.log.warn(
      `tree rollouts ${lost.join(", ")} (${g.input.example.id}) start over: their parent node was not recorded`,
    );
  }
  return kept;
}

function idsOf(n: Recorded): string[] {
  return [n.id, ...n.children.flatMap(idsOf)];
}

/** The turns from the root to `node`, in order. */
function pathTurns(node: TreeNode): Turn[] {
  const own = node.trajectory.turns;
  return node.parent ? [...pathTurns(node.parent), ...own] : [...own];
}

/** The conversation the policy saw after `node`'s last turn (as `playTurn` built it). */
function messagesAfter(node: TreeNode): Message[] {
  return resumedMessages({ initialMessages: node.trajectory.initialMessages, turns: pathTurns(node) });
}

/** Rebuilds recorded node `rec` (and its subtree) under `parent`, adding what each node does next to `work`. */
async function rebuild(
  g: TreeGrowth,
  rec: Recorded,
  parent: TreeNode | undefined,
  parentRec: Recorded | undefined,
  work: Work[],
): Promise<void> {
  const k = g.deps.tree.branching_factor;
  const r = rec.rollout;
  const node = g.newNode(parent, rec.first, rec.id);
  const t = node.trajectory;
  const turns = r?.turns ?? [];
  const end = rec.first + turns.length;
  if (turns.some((turn, i) => turn.index !== rec.first + i))
    throw new TreeRestart(`the recorded turns of ${rec.id} do not run on from turn ${rec.first}`);
  t.turns = [...turns];
  t.policyVersions = versionsOf(turns);
  t.initialMessages = r?.initialMessages ?? rec.children[0]?.rollout?.initialMessages ?? [];
  if (r) t.timing = { startMs: r.startMs, endMs: r.startMs };
  t.metrics["resume/turn"] = turns.length;
  if (rec.children.length > 0 || r?.stopReason === "branched") {
    if (rec.children.length > k || rec.children.some((c) => c.first !== end))
      throw new TreeRestart(`the recorded children of ${rec.id} do not continue its turn ${end}`);
    t.stopReason = "branched";
    g.leaves += k - 1;
    work.push({ node, recorded: r !== undefined });
    for (const child of rec.children) await rebuild(g, child, node, rec, work);
    // children the kill caught before their first turn (or before their fork) fork again from the branch point
    for (let i = rec.children.length; i < k; i++) {
      const child = g.newNode(node, end);
      const session = await restoreAt(g, rec, child.trajectory.id);
      if (typeof session === "string")
        throw new TreeRestart(
          `the state of ${rec.id} at its branch point (turn ${end}) cannot be restored (${session})`,
        );
      work.push({ node: child, session, messages: messagesAfter(node), start: end });
    }
    return;
  }
  const ended = r?.stopReason ?? (r?.point.done ? "done" : undefined);
  if (ended) {
    t.stopReason = ended;
    work.push({ node, recorded: true });
    return;
  }
  const session = await restoreAt(g, rec, rec.id);
  if (typeof session !== "string") {
    work.push({ node, session, messages: messagesAfter(node), start: end, resumedAt: turns.length });
    return;
  }
  const lost = `its state after turn ${end - 1} cannot be restored (${session})`;
  if (!parent || !parentRec) throw new TreeRestart(`root ${rec.id}: ${lost}`);
  const again = await restoreAt(g, parentRec, rec.id);
  if (typeof again === "string")
    throw new TreeRestart(
      `${rec.id}: ${lost}, nor its parent ${parentRec.id}'s at its branch point (turn ${rec.first}): ${again}`,
    );
  g.deps.log.warn(
    `tree rollout ${rec.id} (${g.input.example.id}) starts over from its parent ${parentRec.id}'s branch point (turn ${rec.first}): ${lost}`,
  );
  t.turns = [];
  t.policyVersions = [];
  delete t.metrics["resume/turn"];
  t.timing = { startMs: Date.now(), endMs: Date.now() };
  work.push({ node, session: again, messages: messagesAfter(parent), start: rec.first });
}

/**
 * A session in `rec`'s state after its last recorded turn, for node `id` (`Environment.restore`; a root rebuilt from
 * its children was at its start: a fresh session), or why not.
 */
async function restoreAt(g: TreeGrowth, rec: Recorded, id: string): Promise<EnvSession | string> {
  const { deps, input } = g;
  const { env, names } = deps;
  const r = rec.rollout;
  try {
    if (!r) {
      const session = await deps.pending.run(
        `${names.env}.open(${input.example.id}) for ${id}`,
        deps.timeouts.env_open_ms,
        () => env.open(input.example, { rolloutId: id, signal: deps.signal }),
        { plugin: names.env, hook: "open" },
      );
      await deps.pending
        .run(`${names.env}.start ${id}`, deps.timeouts.env_open_ms, () => session.start(), {
          plugin: names.env,
          hook: "start",
        })
        .catch(async (error) => {
          await g.close(id, session);
          throw error;
        });
      return session;
    }
    if (!env.restore) return `the ${names.env} env cannot restore sessions`;
    const restore = env.restore.bind(env);
    return await deps.pending.run(
      `${names.env}.restore ${id}`,
      deps.timeouts.env_open_ms,
      () => restore(input.example, { rolloutId: id, signal: deps.signal, state: r.point.state }),
      { plugin: names.env, hook: "restore" },
    );
  } catch (error) {
    return errorMessage(error);
  }
}
