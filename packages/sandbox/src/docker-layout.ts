import { readOnlyPaths } from "./shared.ts";
import { shellQuote } from "./shell.ts";
import type { TaskFiles } from "./types.ts";

/** The container's root-only (0700) directory: task bundles, evaluation output, snapshots. */
export const AIR_DIR = "/var/lib/air";

/** Where the pristine bundle of `files`' task lives in the container. */
export function taskDir(files: TaskFiles): string {
  return `${AIR_DIR}/tasks/${files.key}`;
}

/**
 * Root commands that lay out a fresh workspace of `files` at `target`: a copy of the task's workspace,
 * owned by the agent `user` (without `copy`: what a snapshot unpacked there), and the read-only paths hard links to
 * the pristine bundle, root-owned and unwritable (`cp -al`: nothing of the data is copied; nobody but root can
 * change them, and root's evaluation lays its files over them with `--remove-destination`).
 */
export function layoutCommands(files: TaskFiles, target: string, copy: boolean, user: string): string[] {
  const t = shellQuote(target);
  const u = shellQuote(user);
  const lock = `chown -R root:root "$p" && chmod -R a-w,a+rX "$p"`;
  const ro = readOnlyPaths(files).map(shellQuote).join(" ");
  return [
    `rm -rf ${t} && mkdir -p ${t}`,
    copy ? copyWithoutReadOnly(files, `${shellQuote(taskDir(files))}/workspace`, t) : "true",
    `chown -R ${u}: ${t}`,
    ro ? `for r in ${ro}; do p=${t}/"$r"; ${linkPristine(files, "$r", "$p")} && ${lock}; done; true` : "true",
  ];
}

/** A root command writing a tar of the tree `from` (quoted) without the task's read-only paths to stdout. */
export function tarWithoutReadOnly(files: TaskFiles, from: string): string {
  const excludes = readOnlyPaths(files)
    .map((p) => `--exclude=${shellQuote(`./${p}`)}`)
    .join(" ");
  return `tar -C ${from} --anchored ${excludes} -cf - .`;
}

/** A root command copying the tree `from` into `to` (both quoted) without the task's read-only paths. */
export function copyWithoutReadOnly(files: TaskFiles, from: string, to: string): string {
  return `${tarWithoutReadOnly(files, from)} | tar -C ${to} -xf -`;
}

/** A root command hard-linking the pristine read-only path `$r` of the bundle to `$p` (shell words). */
export function linkPristine(files: TaskFiles, r: string, p: string): string {
  const src = `${shellQuote(taskDir(files))}/workspace/"${r}"`;
  return `[ -e ${src} ] && [ ! -L ${src} ] && rm -rf "${p}" && cp -al ${src} "${p}"`;
}

/** Root commands that remove what the agent `user` left outside its workspace (home dot-dirs, temp files). */
export function cleanupCommands(user: string): string[] {
  const u = shellQuote(user);
  return [
    `home=$(getent passwd ${u} | cut -d: -f6); rm -rf "$home"/.local "$home"/.cache "$home"/.config "$home"/.ipython`,
    `find /tmp /var/tmp /dev/shm -mindepth 1 -user ${u} -delete 2>/dev/null || true`,
  ];
}

/** Where an evaluation's stdout and stderr are written (root-only). */
export const EVAL_OUT = `${AIR_DIR}/eval.out`;
export const EVAL_ERR = `${AIR_DIR}/eval.err`;

/**
 * The root script of one evaluation at the workspace's own path: agent processes frozen, the workspace moved
 * aside, a root-only copy without symlinks and with the pristine evaluation files in its place, `command` run as
 * root for at most `seconds` (output to {@link EVAL_OUT}, {@link EVAL_ERR}), everything put back; prints the
 * exit status last.
 */
export function evaluationScript(
  files: TaskFiles,
  workspace: string,
  user: string,
  command: string,
  seconds: number,
): string {
  const ws = shellQuote(workspace);
  const held = shellQuote(`${workspace}.air-held`);
  const u = shellQuote(user);
  const out = EVAL_OUT;
  const err = EVAL_ERR;
  const ro = readOnlyPaths(files).map(shellQuote).join(" ");
  return [
    `pkill -STOP -u ${u}; status=255; rm -rf ${held} ${out} ${err}`,
    `if [ -d ${ws} ] && [ ! -L ${ws} ] && mv ${ws} ${held}; then`,
    // the agent's files copied (reflinks where the filesystem has them), the read-only paths hard-linked
    // from the pristine bundle, the evaluation files laid over (replacing, never writing through a link)
    `  if mkdir -m 700 ${ws} && { ${copyWithoutReadOnly(files, held, ws)}; } 2>/dev/null; find ${ws} -type l -delete;` +
      (ro ? ` for r in ${ro}; do ${linkPristine(files, "$r", `${workspace}/$r`)}; done;` : "") +
      ` cp -a --remove-destination ${shellQuote(taskDir(files))}/evaluation/. ${ws}/ &&` +
      ` chown root:root ${ws} && chmod 700 ${ws}; then`,
    `    (cd ${ws} && PYTHONNOUSERSITE=1 timeout -s KILL ${seconds} bash -c ${shellQuote(command)}) >${out} 2>${err}; status=$?`,
    "  fi",
    `  rm -rf ${ws}; mv ${held} ${ws}`,
    "fi",
    `pkill -CONT -u ${u}; echo -n $status`,
  ].join("\n");
}
