/**
 * One "abort" listener per signal, fanning out to any number of callbacks.
 *
 * Thousands of rollouts wait on the run's signal at once (a generate, an env step, a sleep each). An
 * EventTarget's `removeEventListener` scans its listener list, so with 8,000 listeners adding and removing one
 * costs ~34 µs (1 µs with 100) — per await, per turn. Here a signal has a single listener and the callbacks sit in
 * a Set: adding and removing one is O(1) however many wait.
 */

const waiting = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `fn` once when `signal` aborts (not when it already has: check `signal.aborted` first); returns a function
 * that removes it. A callback that throws does not stop the others; its error is reported as an uncaught one.
 * @example const off = onAbort(signal, () => reject(new Error("aborted"))); try { … } finally { off(); }
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let callbacks = waiting.get(signal);
  if (callbacks === undefined) {
    const created = new Set<() => void>();
    callbacks = created;
    waiting.set(signal, created);
    signal.addEventListener(
      "abort",
      () => {
        waiting.delete(signal);
        for (const callback of created) {
          try {
            callback();
          } catch (error) {
            queueMicrotask(() => {
              throw error;
            });
          }
        }
        created.clear();
      },
      { once: true },
    );
  }
  // A wrapper of its own, so the same function added twice is called twice and removed once per call.
  const entry = () => fn();
  callbacks.add(entry);
  const set = callbacks;
  return () => {
    set.delete(entry);
  };
}
