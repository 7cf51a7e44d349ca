import { AirError, errorMessage } from "../errors.ts";
import type { EnvSession } from "../plugin.ts";
import type { AttemptDeps } from "./attempt.ts";

/**
 * One env call of a tree node that must not fail the tree (close, dropState, dropStates): bounded by
 * `env_open_ms`; a failure is a warning naming the call.
 * @example await settleEnvCall(deps, "close s0-r3", "close", () => session.close());
 */
export function settleEnvCall(
  deps: AttemptDeps,
  what: string,
  hook: string,
  call: () => Promise<unknown>,
): Promise<void> {
  return deps.pending
    .run(`${deps.names.env}.${what}`, deps.timeouts.env_open_ms, call, { plugin: deps.names.env, hook })
    .then(
      () => {},
      (error) => deps.log.warn(`${what} failed: ${errorMessage(error)}`),
    );
}

/**
 * Runs `drop` (a node's recorded states going) once `step` is trained, through `deps.keepState`, or now without
 * one: a kill before then resumes that step, which may still need them.
 * @example await dropWhenTrained(deps, 3, () => settleEnvCall(deps, "dropState s3-r1", "dropState", drop));
 */
export async function dropWhenTrained(
  deps: AttemptDeps,
  step: number,
  drop: () => Promise<void>,
): Promise<void> {
  if (deps.keepState) deps.keepState(step, drop);
  else await drop();
}

/**
 * Sessions for the children `ids` of a branch point of node `id`: with `keepOwn` the first child keeps `session`
 * and the others get forks; else every child gets a fork named by its id (`EnvSession.fork({ rolloutId })`).
 * On a failure the forks made are closed and the error thrown.
 * @example const { sessions, ms } = await forkSessions(deps, session, "s0-r0", ["s0-r2", "s0-r3"], false);
 */
export async function forkSessions(
  deps: AttemptDeps,
  session: EnvSession,
  id: string,
  ids: string[],
  keepOwn: boolean,
): Promise<{ sessions: EnvSession[]; ms: number }> {
  const fork = session.fork?.bind(session);
  if (!fork)
    throw new AirError("ENV_FAILED", `the ${deps.names.env} env's session cannot fork (tree rollouts)`);
  const t0 = Date.now();
  const sessions: EnvSession[] = keepOwn ? [session] : [];
  try {
    for (const child of ids.slice(sessions.length)) {
      sessions.push(
        await deps.pending.run(
          `${deps.names.env}.fork ${id}`,
          deps.timeouts.env_open_ms,
          () => fork({ rolloutId: child }),
          { plugin: deps.names.env, hook: "fork" },
        ),
      );
    }
  } catch (error) {
    await Promise.allSettled(sessions.filter((s) => s !== session).map((s) => s.close()));
    throw error;
  }
  return { sessions, ms: Date.now() - t0 };
}
