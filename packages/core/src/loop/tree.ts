import { AirError, errorMessage } from "../errors.ts";
import type { EnvSession } from "../plugin.ts";
import { type Example, type Message, SCHEMA_VERSION, type Trajectory } from "../types.ts";
import type { AttemptDeps } from "./attempt.ts";
import { type Episode, finishEpisode, playTurn } from "./rollout.ts";
import type { TreeConfig } from "./tree-config.ts";
import { scoreLeaves, type TreeNode } from "./tree-score.ts";

export interface TreeDeps extends AttemptDeps {
  tree: TreeConfig;
  /** Most leaves the example's trees may have (`rollouts_per_example`). */
  maxLeaves: number;
  /** Takes a rollout slot (the orchestrator's semaphore); resolves with its release. */
  slot: () => Promise<() => void>;
}

export interface TreeInput {
  example: Example;
  groupId: string;
  step: number;
  /** A fresh rollout id per node. */
  nextId: () => string;
}

type Node = TreeNode;

/**
 * Tree rollouts of one example (`[orchestrator.tree]`): `roots` episodes start fresh; when a node reaches a branch
 * turn and the example has leaves to spare, its session is forked (`EnvSession.fork`) into `branching_factor`
 * sessions and each continues as a child node from the same messages. A node's trajectory holds its own turns
 * only (`parent` names the node it continues and the index of its first turn), so shared turns are trained once
 * and a child's samples carry the shared history as prompt tokens. Once every leaf ended, each leaf's whole path
 * (root → leaf) is scored by the reward entries: a leaf's `reward` is its path's return, an internal node's the
 * mean return of the leaves under it (its value). Every node emits rollout:start, turn:end and rollout:end.
 * A node whose env or policy fails ends as a failed leaf (no retries: its state cannot be replayed).
 * @example const nodes = await growTree(deps, { example, groupId: "0:a", step: 0, nextId: () => `s0-r${n++}` });
 */
export async function growTree(deps: TreeDeps, input: TreeInput): Promise<Trajectory[]> {
  const nodes: Node[] = [];
  let leaves = deps.tree.roots;
  const budget = (extra: number) => {
    if (leaves + extra > deps.maxLeaves) return false;
    leaves += extra;
    return true;
  };

  const newNode = (parent: Node | undefined, firstTurn: number): Node => {
    const now = Date.now();
    const trajectory: Trajectory = {
      schemaVersion: SCHEMA_VERSION,
      id: input.nextId(),
      exampleId: input.example.id,
      task: input.example.task,
      groupId: input.groupId,
      step: input.step,
      split: "train",
      policyVersions: [],
      initialMessages: parent?.trajectory.initialMessages ?? [],
      turns: [],
      stopReason: "max_turns",
      score: input.example.score,
      metrics: { "tree/depth": parent ? (parent.trajectory.metrics["tree/depth"] ?? 0) + 1 : 0 },
      timing: { startMs: now, endMs: now },
    };
    if (parent) trajectory.parent = { trajectoryId: parent.trajectory.id, turnIndex: firstTurn };
    const node: Node = { trajectory, parent, children: [] };
    parent?.children.push(node);
    nodes.push(node);
    return node;
  };

  const close = (node: Node, session: EnvSession) =>
    deps.pending
      .run(
        `${deps.names.env}.close ${node.trajectory.id}`,
        deps.timeouts.env_open_ms,
        () => session.close(),
        {
          plugin: deps.names.env,
          hook: "close",
        },
      )
      .catch((error) => deps.log.warn(`close of ${node.trajectory.id} failed: ${errorMessage(error)}`));

  /**
   * Plays `node` from turn `first` in `session`. It owns the session and the rollout slot (`release`): both are
   * given up when the node ends, or handed to its first child at a branch point (the other children wait for
   * slots of their own), so a slot is held only by a path that is playing and can always finish.
   */
  const play = async (
    node: Node,
    session: EnvSession,
    messages: Message[],
    first: number,
    release: () => void,
  ): Promise<void> => {
    const t = node.trajectory;
    const episode: Episode = { rolloutId: t.id, step: input.step, session, trajectory: t, messages };
    let handedOver = false;
    try {
      await deps.bus.emit("rollout:start", {
        rolloutId: t.id,
        exampleId: t.exampleId,
        task: t.task,
        groupId: t.groupId,
        step: t.step,
        policyVersion: deps.policyVersion(),
        attempt: 0,
      });
      for (let index = first; ; index++) {
        if (index >= deps.maxTurns) {
          if (session.finish) await finishEpisode(deps, session.finish.bind(session), t);
          return;
        }
        const k = deps.tree.branching_factor;
        if (branchHere(deps.tree, node, index, first) && budget(k - 1)) {
          const forks = await forkSession(session, k - 1, t.id, (extra) => {
            leaves -= extra;
          });
          t.stopReason = "branched";
          t.timing.endMs = Date.now();
          handedOver = true;
          const sessions = [session, ...forks.sessions];
          t.metrics["tree/fork_ms"] = forks.ms;
          const children = sessions.map(() => newNode(node, index));
          await Promise.all(
            children.map(async (child, i) => {
              const own = sessions[i] as EnvSession;
              if (i === 0) return play(child, own, [...messages], index, release);
              return play(child, own, [...messages], index, await deps.slot());
            }),
          );
          return;
        }
        const outcome = await playTurn(deps, episode, index);
        if (outcome === "done") {
          t.stopReason = "done";
          return;
        }
        if (outcome !== "continue") {
          t.stopReason = outcome;
          return;
        }
      }
    } catch (error) {
      t.stopReason = "failed";
      t.error = errorMessage(error);
      deps.log.warn(`tree rollout ${t.id} (${t.exampleId}) failed: ${t.error}`);
    } finally {
      if (!handedOver) {
        await close(node, session);
        t.timing.endMs = Date.now();
        release();
      }
    }
  };

  const forkSession = async (session: EnvSession, count: number, id: string, refund: (n: number) => void) => {
    const fork = session.fork?.bind(session);
    if (!fork) {
      refund(count);
      throw new AirError("ENV_FAILED", `the ${deps.names.env} env's session cannot fork (tree rollouts)`);
    }
    const t0 = Date.now();
    const sessions: EnvSession[] = [];
    try {
      for (let i = 0; i < count; i++) {
        sessions.push(
          await deps.pending.run(`${deps.names.env}.fork ${id}`, deps.timeouts.env_open_ms, fork, {
            plugin: deps.names.env,
            hook: "fork",
          }),
        );
      }
    } catch (error) {
      refund(count);
      await Promise.allSettled(sessions.map((s) => s.close()));
      throw error;
    }
    return { sessions, ms: Date.now() - t0 };
  };

  const root = async (): Promise<void> => {
    const release = await deps.slot();
    let handedOver = false;
    try {
      const node = newNode(undefined, 0);
      const t = node.trajectory;
      let session: EnvSession;
      let initial: Message[];
      try {
        session = await deps.pending.run(
          `${deps.names.env}.open(${input.example.id}) for ${t.id}`,
          deps.timeouts.env_open_ms,
          () => deps.env.open(input.example, { rolloutId: t.id, signal: deps.signal }),
          { plugin: deps.names.env, hook: "open" },
        );
      } catch (error) {
        t.stopReason = "failed";
        t.error = errorMessage(error);
        return;
      }
      try {
        initial = await deps.pending.run(
          `${deps.names.env}.start ${t.id}`,
          deps.timeouts.env_open_ms,
          () => session.start(),
          {
            plugin: deps.names.env,
            hook: "start",
          },
        );
      } catch (error) {
        t.stopReason = "failed";
        t.error = errorMessage(error);
        await close(node, session);
        return;
      }
      t.initialMessages = initial;
      handedOver = true;
      await play(node, session, [...initial], 0, release);
    } finally {
      if (!handedOver) release();
    }
  };

  await Promise.all(Array.from({ length: deps.tree.roots }, root));
  await scoreLeaves(deps, nodes);
  for (const node of nodes) await deps.bus.emit("rollout:end", { trajectory: node.trajectory });
  return nodes.map((n) => n.trajectory);
}

/** Whether `node` forks before playing turn `index` (never at a child's own first turn: it was just forked). */
function branchHere(tree: TreeConfig, node: Node, index: number, first: number): boolean {
  if (node.parent && index === first) return false;
  if (tree.branch_turns.includes(index)) return true;
  if (tree.branch_every > 0 && index > 0 && index % tree.branch_every === 0) return true;
  const last = node.trajectory.turns.at(-1);
  return tree.branch_on_validate && last !== undefined && last.scores !== undefined;
}
