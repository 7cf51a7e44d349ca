import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { BatchWriter } from "./writer.ts";

function table() {
  const db = new Database(":memory:");
  db.exec("CREATE TABLE t (v INTEGER NOT NULL)");
  const count = () => (db.query("SELECT count(*) AS n FROM t").get() as { n: number }).n;
  return { db, count, insert: (v: number | null) => () => db.run("INSERT INTO t (v) VALUES (?)", [v]) };
}

describe("BatchWriter", () => {
  test("flushes once flushRows operations are queued, in one transaction", () => {
    const { db, count, insert } = table();
    const w = new BatchWriter(db, { flushRows: 3, flushMs: 60_000 });
    w.push(insert(1));
    w.push(insert(2));
    expect(count()).toBe(0);
    w.push(insert(3));
    expect(count()).toBe(3);
    expect(w.flushes).toBe(1);
  });

  test("flushes on its timer", async () => {
    const { db, count, insert } = table();
    const w = new BatchWriter(db, { flushRows: 1000, flushMs: 5 });
    w.push(insert(1));
    expect(count()).toBe(0);
    for (let i = 0; i < 200 && count() === 0; i++) await Bun.sleep(5);
    expect(count()).toBe(1);
  });

  test("flushSoon writes what this tick queued in one transaction, long before flushMs", async () => {
    const { db, count, insert } = table();
    const w = new BatchWriter(db, { flushRows: 1000, flushMs: 60_000 });
    w.push(insert(1));
    w.flushSoon();
    w.push(insert(2));
    w.flushSoon();
    expect(count()).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(count()).toBe(2);
    expect(w.flushes).toBe(1);
  });

  test("a failing operation rolls back its whole batch and is reported", () => {
    const { db, count, insert } = table();
    const errors: unknown[] = [];
    const w = new BatchWriter(db, { flushRows: 10, flushMs: 60_000, onError: (e) => errors.push(e) });
    w.push(insert(1));
    w.push(insert(null));
    w.flush();
    expect(count()).toBe(0);
    expect(errors).toHaveLength(1);
    w.push(insert(2));
    w.flush();
    expect(count()).toBe(1);
  });

  test("drops writes pushed after close", () => {
    const { db, count, insert } = table();
    const w = new BatchWriter(db, { flushRows: 10, flushMs: 60_000 });
    w.push(insert(1));
    w.close();
    w.push(insert(2));
    w.flush();
    expect(count()).toBe(1);
    expect(w.dropped).toBe(1);
  });
});
