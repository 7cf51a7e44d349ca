import { expect, test } from "bun:test";
import { onAbort } from "./abort-fanout.ts";
import { PendingWork, sleep } from "./pending.ts";

/** A signal whose addEventListener calls are counted. */
function counted() {
  const controller = new AbortController();
  const signal = controller.signal;
  let listeners = 0;
  const add = signal.addEventListener.bind(signal);
  signal.addEventListener = ((...args: Parameters<typeof add>) => {
    listeners++;
    add(...args);
  }) as typeof signal.addEventListener;
  return { controller, signal, listeners: () => listeners };
}

test("a thousand waiters are one listener on the signal; the removed ones are not called, the others once", () => {
  const { controller, signal, listeners } = counted();
  const calls: number[] = [];
  const offs = Array.from({ length: 1000 }, (_, i) => onAbort(signal, () => calls.push(i)));
  for (const off of offs.slice(0, 500)) off();
  expect(listeners()).toBe(1);
  controller.abort();
  controller.abort();
  expect(calls).toHaveLength(500);
  expect(calls[0]).toBe(500);
  expect(new Set(calls).size).toBe(500);
});

test("the same function added twice is called twice, and one removal removes one of them", () => {
  const controller = new AbortController();
  let count = 0;
  const fn = () => count++;
  onAbort(controller.signal, fn);
  const off = onAbort(controller.signal, fn);
  onAbort(controller.signal, fn);
  off();
  controller.abort();
  expect(count).toBe(2);
});

test("pending work and sleeps on the run's signal share its one listener and still stop at the abort", async () => {
  const { controller, signal, listeners } = counted();
  const pending = new PendingWork();
  const runs = Array.from({ length: 200 }, (_, i) =>
    pending.run(`work ${i}`, 60_000, () => new Promise(() => {}), { signal }),
  );
  const sleeps = Array.from({ length: 200 }, () => sleep(60_000, signal));
  expect(listeners()).toBe(1);
  controller.abort();
  const settled = await Promise.allSettled([...runs, ...sleeps]);
  expect(settled.every((s) => s.status === "rejected" && String(s.reason).includes("aborted"))).toBe(true);
  expect(pending.unsettled()).toEqual([]);
});
