import type { GroupNodeRow } from "@air/logger-sqlite/read";
import { html } from "hono/html";
import { type Html, layout, num, runNav } from "../html.ts";
import type { RunRow } from "../queries.ts";
import { forkTurns, type GroupTree, pathTo, type TreeNode } from "../tree.ts";

/** Link to one trajectory's page. */
export const trajectoryHref = (runId: number, rolloutId: string) =>
  `/runs/${runId}/trajectories/${encodeURIComponent(rolloutId)}`;

/** Link to a group's page (its tree, for a tree rollout). */
export const groupHref = (runId: number, groupId: string) =>
  `/runs/${runId}/groups/${encodeURIComponent(groupId)}`;

/** A difference with its sign ("+0.250", "-0.125"), or "–". */
export function signed(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–";
  const text = num(Math.abs(x) < 1e-12 ? 0 : x, digits);
  return x > 1e-12 ? `+${text}` : text;
}

/** "turn 2", "turns 2–4", or "no turns" (a node that forked before playing one). */
export function turnsText(node: TreeNode): string {
  if (node.lastTurn === null) return "no turns";
  return node.lastTurn === node.firstTurn
    ? `turn ${node.firstTurn}`
    : `turns ${node.firstTurn}–${node.lastTurn}`;
}

const status = (row: GroupNodeRow) =>
  row.stopReason && row.stopReason !== row.status ? `${row.status} (${row.stopReason})` : row.status;

const valueTitle = (n: TreeNode) =>
  n.children.length === 0
    ? "the return of this leaf's whole path (root → leaf)"
    : `V: the mean return of the ${n.leafReturns.length} finished leaves under this node`;

/**
 * The siblings of one branch point (or a group's roots) side by side: turns, return V, V − the siblings' mean,
 * the stored advantage; the best continuation and `current` are marked.
 */
export function siblingTable(runId: number, siblings: TreeNode[], current?: string): Html {
  return html`<table class="siblings"><thead><tr><th>node</th><th>turns</th><th>status</th>
    <th title="a leaf: its path's return; a branch point: the mean of its leaves' returns">return (V)</th>
    <th>leaves</th><th title="V − the mean V of these siblings">vs siblings</th>
    <th title="mean advantage of the node's stored training samples">advantage</th></tr></thead>
    <tbody>${siblings.map(
      (
        s,
      ) => html`<tr data-node="${s.id}" class="${[s.best ? "best" : "", s.id === current ? "current" : ""].join(" ").trim()}">
        <td><a href="${trajectoryHref(runId, s.id)}">${s.id}</a>${s.best ? html` <span class="win">best</span>` : ""}</td>
        <td>${turnsText(s)}</td><td title="${s.row.error ?? ""}">${status(s.row)}</td>
        <td title="${valueTitle(s)}">${num(s.value, 4)}</td><td>${s.leafReturns.length}</td>
        <td class="delta">${signed(s.vsSiblings, 4)}</td>
        <td title="${s.row.samples} training sample(s)">${num(s.row.advantage, 4)}</td></tr>`,
    )}</tbody></table>`;
}

/** One node and its subtree: a line with its facts, then at a branch point its children compared and drawn. */
function nodeItem(runId: number, node: TreeNode): Html {
  const kids = node.children;
  const at = forkTurns(node);
  return html`<li class="node${node.best ? " best" : ""}" data-node="${node.id}" data-depth="${node.depth}">
    <div class="node-line"><a href="${trajectoryHref(runId, node.id)}">${node.id}</a> · ${turnsText(node)} ·
      ${status(node.row)} · <span title="${valueTitle(node)}">${kids.length ? "V" : "return"} ${num(node.value, 4)}</span>
      · advantage ${num(node.row.advantage, 4)}${node.best ? html` <span class="win">best of its siblings</span>` : ""}
      ${node.missingParent === undefined ? "" : html`<span class="warn">parent ${node.missingParent} is not in this group</span>`}</div>
    ${
      kids.length
        ? html`<div class="branch"><div class="branch-head">branch point: forked at turn ${at.join(", ")} into
            ${kids.length} continuations</div>${siblingTable(runId, kids)}
            <ul class="tree">${kids.map((c) => nodeItem(runId, c))}</ul></div>`
        : ""
    }</li>`;
}

/** A tree rollout drawn as nested lists: roots (compared when several), branch points, children. */
export function treeView(runId: number, tree: GroupTree): Html {
  return html`<div class="tree-view">
    ${
      tree.roots.length > 1
        ? html`<h2>Roots (siblings of each other)</h2>${siblingTable(runId, tree.roots)}`
        : ""
    }
    <h2>Tree</h2><ul class="tree root">${tree.roots.map((r) => nodeItem(runId, r))}</ul></div>`;
}

/** A flat group: its rollouts with reward, the difference to the group's mean and the stored advantage. */
function flatTable(runId: number, rows: GroupNodeRow[]): Html {
  const rewards = rows.flatMap((r) => (r.status === "done" && r.reward !== null ? [r.reward] : []));
  const mean = rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : null;
  return html`<table class="group-members"><thead><tr><th>rollout</th><th>status</th><th>turns</th><th>reward</th>
    <th>vs group mean</th><th>advantage</th></tr></thead>
    <tbody>${rows.map(
      (r) => html`<tr><td><a href="${trajectoryHref(runId, r.rolloutId)}">${r.rolloutId}</a></td>
        <td title="${r.error ?? ""}">${status(r)}</td><td>${r.turnCount}</td><td>${num(r.reward, 4)}</td>
        <td>${mean === null || r.reward === null ? "–" : signed(r.reward - mean, 4)}</td>
        <td>${num(r.advantage, 4)}</td></tr>`,
    )}</tbody></table>`;
}

/** A group's page: its tree rollout (`tree`), or for a flat group the table of its rollouts. */
export function groupPage(run: RunRow, groupId: string, rows: GroupNodeRow[], tree: GroupTree | null): Html {
  const first = rows[0] as GroupNodeRow;
  const facts = tree
    ? html`${tree.nodes.size} nodes · ${tree.leaves} leaves · ${tree.branchPoints} branch points${
        tree.orphans
          ? html` · <span class="warn">${tree.orphans} node(s) whose parent is not stored here</span>`
          : ""
      }`
    : html`${rows.length} rollouts (flat: no tree)`;
  return layout(
    `${run.name}: group ${groupId}`,
    html`${runNav(run.id, run.name, "trajectories")}
    <h1>Group ${groupId}</h1>
    <p class="count">${first.task} · example ${first.exampleId} · step ${first.step} · ${facts}</p>
    ${
      tree
        ? html`<p class="note">A tree rollout stores one trajectory per node. A leaf's return is the reward of its whole
          path (root → leaf); a node's V is the mean return of the finished leaves under it. "vs siblings" is
          V − the mean V of the node's siblings (the children of one branch point; the roots of the group): the
          sibling term of the tree advantage. "advantage" is what the node's training samples carried (a node with
          no turns, an eval rollout, or a filtered sample has none).</p>${treeView(run.id, tree)}`
        : flatTable(run.id, rows)
    }`,
  );
}

/**
 * The place of one node in its tree, for its trajectory page: the path from the root (each step "forked at turn
 * N"), the link to its parent, its siblings compared, and at a branch point its children.
 */
export function nodeContext(runId: number, groupId: string, tree: GroupTree, node: TreeNode): Html {
  const path = pathTo(node);
  const siblings = node.parent ? node.parent.children : tree.roots;
  const chain = path.map((n, i) => {
    const label =
      n === node
        ? html`<strong>${n.id}</strong>`
        : html`<a href="${trajectoryHref(runId, n.id)}">${n.id}</a>`;
    return i === 0 ? label : html` → <span class="fork">forked at turn ${n.firstTurn}</span> → ${label}`;
  });
  const parent = node.parent;
  return html`<section class="tree-context">
    <h2>Tree rollout</h2>
    <p>A node of the tree of group <a href="${groupHref(runId, groupId)}">${groupId}</a> (depth ${node.depth},
      ${turnsText(node)}).</p>
    <p class="chain">${chain}</p>
    ${
      parent
        ? html`<p class="parent">Continues <a rel="parent" href="${trajectoryHref(runId, parent.id)}">${parent.id}</a>,
          forked at turn ${node.firstTurn}: its turns before ${node.firstTurn} are the parent's.</p>`
        : node.missingParent !== undefined
          ? html`<p class="warn">Its parent ${node.missingParent} is not stored in this group.</p>`
          : html`<p class="parent">A root of the tree.</p>`
    }
    ${
      siblings.length > 1
        ? html`<h3>${parent ? html`Siblings (the continuations of ${parent.id} at turn ${node.firstTurn})` : "Roots"}</h3>
          ${siblingTable(runId, siblings, node.id)}`
        : ""
    }
    ${
      node.children.length
        ? html`<h3>Children (branched at turn ${forkTurns(node).join(", ")})</h3>${siblingTable(runId, node.children)}`
        : ""
    }</section>`;
}
