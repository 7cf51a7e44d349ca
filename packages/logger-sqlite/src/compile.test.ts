import { describe, expect, test } from "bun:test";
import { and, eq, sql } from "drizzle-orm";
import { assign, columnKeys, compileInsertMany, compileWrite } from "./compile.ts";
import { openStore } from "./open.ts";
import { runs, trajectories } from "./schema.ts";

const store = () => openStore(":memory:");

describe("compileWrite", () => {
  test("binds a typed row by position and applies column encoders (boolean mode)", () => {
    const db = store();
    const insert = compileWrite(db.$client, runs, ["name", "startedAt", "source"], (p) =>
      db.insert(runs).values(p),
    );
    insert({ name: "a", startedAt: 5, source: "air-agent" });
    const trajectory = compileWrite(
      db.$client,
      trajectories,
      ["runId", "rolloutId", "step", "exampleId", "task", "groupId", "validated"],
      (p) => db.insert(trajectories).values(p),
    );
    trajectory({
      runId: 1,
      rolloutId: "r",
      step: 0,
      exampleId: "e",
      task: "t",
      groupId: "g",
      validated: true,
    });
    expect(db.select().from(runs).get()).toMatchObject({
      id: 1,
      name: "a",
      startedAt: 5,
      source: "air-agent",
    });
    const raw = db.$client.query("SELECT validated, typeof(validated) AS type FROM trajectories").get();
    expect(raw).toEqual({ validated: 1, type: "integer" });
    expect(db.select().from(trajectories).get()?.validated).toBe(true);
  });

  test("an UPDATE sets only the assigned columns of the matching row", () => {
    const db = store();
    db.insert(runs)
      .values([
        { name: "a", startedAt: 1 },
        { name: "b", startedAt: 2 },
      ])
      .run();
    const end = compileWrite(db.$client, runs, ["id", "status", "endedAt"], (p) =>
      db
        .update(runs)
        .set(assign(p, ["status", "endedAt"]))
        .where(and(eq(runs.id, p.id))),
    );
    end({ id: 2, status: "completed", endedAt: 9 });
    const rows = db.select().from(runs).all();
    expect(rows.map((r) => [r.name, r.status, r.endedAt])).toEqual([
      ["a", "running", null],
      ["b", "completed", 9],
    ]);
  });

  test("column defaults drizzle adds are bound as constants; an unknown placeholder is refused", () => {
    const db = store();
    const insert = compileWrite(db.$client, runs, ["name", "startedAt"], (p) => db.insert(runs).values(p));
    insert({ name: "a", startedAt: 1 });
    expect(db.select().from(runs).get()).toMatchObject({ status: "running", source: "air" });
    expect(() =>
      compileWrite(db.$client, runs, ["id"], () =>
        db
          .update(runs)
          .set({ status: sql`${sql.placeholder("status")}` })
          .where(sql`1`),
      ),
    ).toThrow(/placeholder "status" is not one of \[id\]/);
  });

  test("compileInsertMany writes every row, in order, in statements of up to `chunk` rows", () => {
    const db = store();
    const insert = compileInsertMany(db.$client, runs, ["name", "startedAt"], 4, (rows) =>
      db.insert(runs).values(rows),
    );
    const rows = Array.from({ length: 10 }, (_, i) => ({ name: `r${i}`, startedAt: i }));
    insert(rows);
    insert([]);
    insert(rows.slice(0, 1));
    const stored = db.select().from(runs).all();
    expect(stored.map((r) => [r.id, r.name, r.startedAt, r.status])).toEqual(
      [...rows, rows[0]!].map((r, i) => [i + 1, r.name, r.startedAt, "running"]),
    );
  });

  test("columnKeys lists the schema's property names", () => {
    expect(columnKeys(runs)).toEqual([
      "id",
      "name",
      "runDir",
      "configJson",
      "status",
      "error",
      "source",
      "startedAt",
      "endedAt",
      "heartbeatAt",
      "resumes",
    ]);
  });
});
