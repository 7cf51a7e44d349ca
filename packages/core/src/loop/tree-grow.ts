import { errorMessage } from "../errors.ts";
import type { EnvSession } from "../plugin.ts";
import { type Example, type Message, SCHEMA_VERSION, type Trajectory } from "../types.ts";
import type { AttemptDeps } from "./attempt.ts";
import type { RecordedRollout } from "./resume.ts";
import { type Episode, finishEpisode, playTurn } from "./rollout.ts";
import type { TreeConfig } from "./tree-config.ts";
import type { TreeNode } from "./tree-score.ts";
import { dropWhenTrained, forkSessions, settleEnvCall } from "./tree-session.ts";

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
  /** The nodes of this example's trees the store recorded (`rl --resume`): the trees are rebuilt from them. */
  recorded?: RecordedRollout[];
}

/**
 * One example's trees while they grow: the nodes so far, the leaf budget, and how a node plays, forks and ends
 * (used by `growTree` and, on `rl --resume`, by `resumeTree`).
 */
export class TreeGrowth {
  readonly nodes: TreeNode[] = [];
  /** The example's leaves, planned ones included: the roots plus k − 1 per branch point. */
  leaves: number;
  /** Ids of recorded nodes a resume dropped (their tree started over): new nodes take them first. */
  readonly spareIds: string[] = [];

  constructor(
    readonly deps: TreeDeps,
    readonly input: TreeInput,
  ) {
    this.leaves = deps.tree.roots;
  }

  /** Takes `extra` leaves from the budget (false, nothing taken, when it has too few). */
  budget(extra: number): boolean {
    if (this.leaves + extra > this.deps.maxLeaves) return false;
    this.leaves += extra;
    return true;
  }

  /** A new node's id: a spare one, else the next fresh one that no recorded node (or its parent) holds. */
  nodeId(): string {
    const spare = this.spareIds.shift();
    if (spare !== undefined) return spare;
    const taken = new Set((this.input.recorded ?? []).flatMap((r) => [r.rolloutId, r.parent?.trajectoryId]));
    for (;;) {
      const id = this.input.nextId();
      if (!taken.has(id)) return id;
    }
  }

  /** Whether each node's session records its state at turn ends (then every child plays a fork of its own). */
  private recording(session: EnvSession): boolean {
    return this.deps.resumeRollouts === true && session.saveState !== undefined;
  }

  newNode(parent: TreeNode | undefined, firstTurn: number, id = this.nodeId()): TreeNode {
    const { input } = this;
    const now = Date.now();
    const trajectory: Trajectory = {
      schemaVersion: SCHEMA_VERSION,
      id,
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
    const node: TreeNode = { trajectory, parent, children: [] };
    parent?.children.push(node);
    this.nodes.push(node);
    return node;
  }

  close(id: string, session: EnvSession): Promise<void> {
    return settleEnvCall(this.deps, `close ${id}`, "close", () => session.close());
  }

  /** A node ended (not aborted): its recorded states go once its step is trained (`keepState`), or now. */
  private async dropState(id: string, session: EnvSession): Promise<void> {
    if (!this.recording(session) || !session.dropState) return;
    const dropState = session.dropState.bind(session);
    await dropWhenTrained(this.deps, this.input.step, () =>
      settleEnvCall(this.deps, `dropState ${id}`, "dropState", dropState),
    );
  }

  /** A recorded node taken as it was (`rl --resume`, no session): its states go once its step is trained. */
  async dropRecordedState(id: string): Promise<void> {
    const env = this.deps.env;
    if (!this.deps.resumeRollouts || !env.dropStates) return;
    const dropStates = env.dropStates.bind(env);
    await dropWhenTrained(this.deps, this.input.step, () =>
      settleEnvCall(this.deps, `dropStates ${id}`, "dropStates", () => dropStates([id])),
    );
  }

  /** rollout:start of `node`, with its parent link (and, continuing a recorded node, how many turns it had). */
  emitStart(node: TreeNode, resumedAt?: number): Promise<void> {
    const t = node.trajectory;
    return this.deps.bus.emit("rollout:start", {
      rolloutId: t.id,
      exampleId: t.exampleId,
      task: t.task,
      groupId: t.groupId,
      step: t.step,
      policyVersion: this.deps.policyVersion(),
      attempt: 0,
      ...(t.parent ? { parent: t.parent } : {}),
      ...(resumedAt !== undefined ? { resumedAt } : {}),
    });
  }

  /**
   * Plays `node` from turn `start` in `session` (`messages`: the conversation before that turn). It owns the
   * session and the rollout slot (`release`): both are given up when the node ends, or handed to its first child
   * at a branch point (the other children wait for slots of their own), so a slot is held only by a path that is
   * playing and can always finish. `resumedAt`: the node continues a recorded one that had that many turns.
   */
  async play(
    node: TreeNode,
    session: EnvSession,
    messages: Message[],
    start: number,
    release: () => void,
    resumedAt?: number,
  ): Promise<void> {
    const { deps } = this;
    const t = node.trajectory;
    const first = t.parent?.turnIndex ?? 0;
    const episode: Episode = { rolloutId: t.id, step: this.input.step, session, trajectory: t, messages };
    let handedOver = false;
    let ended = false;
    try {
      await this.emitStart(node, resumedAt);
      for (let index = start; ; index++) {
        if (index >= deps.maxTurns) {
          if (session.finish) await finishEpisode(deps, session.finish.bind(session), t);
          ended = true;
          return;
        }
        const k = deps.tree.branching_factor;
        if (branchHere(deps.tree, node, index, first) && this.budget(k - 1)) {
          const forks = await this.fork(session, t.id, k);
          handedOver = true;
          await this.branch(node, session, forks, messages, index, release);
          return;
        }
        const outcome = await playTurn(deps, episode, index);
        if (outcome === "continue") continue;
        t.stopReason = outcome;
        ended = outcome !== "aborted";
        return;
      }
    } catch (error) {
      t.stopReason = "failed";
      t.error = errorMessage(error);
      ended = true;
      deps.log.warn(`tree rollout ${t.id} (${t.exampleId}) failed: ${t.error}`);
    } finally {
      if (!handedOver) {
        if (ended && !deps.signal.aborted) await this.dropState(t.id, session);
        await this.close(t.id, session);
        t.timing.endMs = Date.now();
        release();
      }
    }
  }

  /** `node` branched at turn `index` into the `forks`' sessions: each plays a child from there. */
  private async branch(
    node: TreeNode,
    session: EnvSession,
    forks: { sessions: EnvSession[]; ids: string[]; ms: number },
    messages: Message[],
    index: number,
    release: () => void,
  ): Promise<void> {
    const t = node.trajectory;
    t.stopReason = "branched";
    t.timing.endMs = Date.now();
    t.metrics["tree/fork_ms"] = forks.ms;
    if (forks.sessions[0] !== session) {
      // every child plays a fork of its own: the node's session (its branch point's state kept) is done
      await this.dropState(t.id, session);
      await this.close(t.id, session);
    }
    const children = forks.ids.map((id) => this.newNode(node, index, id));
    await Promise.all(
      children.map(async (child, i) => {
        const own = forks.sessions[i] as EnvSession;
        return this.play(child, own, [...messages], index, i === 0 ? release : await this.deps.slot());
      }),
    );
  }

  /**
   * `k` sessions for the children of a branch point, with their node ids. When states are recorded each child
   * gets a fork named by its id (what it saves is its own, and the node's branch point state stays for a resume);
   * otherwise the first child keeps the node's session and k − 1 forks are made.
   */
  private async fork(session: EnvSession, id: string, k: number) {
    const ids = Array.from({ length: k }, () => this.nodeId());
    try {
      return { ids, ...(await forkSessions(this.deps, session, id, ids, !this.recording(session))) };
    } catch (error) {
      this.leaves -= k - 1;
      throw error;
    }
  }

  /** A root episode: a fresh session (`env.open`, `start`) played from its first turn; `id` reuses a node's id. */
  async growRoot(id?: string): Promise<void> {
    const { deps, input } = this;
    const release = await deps.slot();
    let handedOver = false;
    try {
      const node = this.newNode(undefined, 0, id);
      const t = node.trajectory;
      let session: EnvSession;
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
        t.initialMessages = await deps.pending.run(
          `${deps.names.env}.start ${t.id}`,
          deps.timeouts.env_open_ms,
          () => session.start(),
          { plugin: deps.names.env, hook: "start" },
        );
      } catch (error) {
        t.stopReason = "failed";
        t.error = errorMessage(error);
        await this.close(t.id, session);
        return;
      }
      handedOver = true;
      await this.play(node, session, [...t.initialMessages], 0, release);
    } finally {
      if (!handedOver) release();
    }
  }
}

/** Whether `node` forks before playing turn `index` (never at a child's own first turn: it was just forked). */
function branchHere(tree: TreeConfig, node: TreeNode, index: number, first: number): boolean {
  if (node.parent && index === first) return false;
  if (tree.branch_turns.includes(index)) return true;
  if (tree.branch_every > 0 && index > 0 && index % tree.branch_every === 0) return true;
  const last = node.trajectory.turns.at(-1);
  return tree.branch_on_validate && last !== undefined && last.scores !== undefined;
}
