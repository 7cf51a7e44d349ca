import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { exportAirAgent, openStore } from "@air/logger-sqlite";
import { runFixture } from "@air/logger-sqlite/testing";
import { resolveStore } from "./store-target.ts";

const dir = mkdtempSync(join(tmpdir(), "air-viz-store-"));
let runDir: string;
let dbPath: string;

beforeAll(async () => {
  ({ runDir, dbPath } = await runFixture({ dir, maxSteps: 1 }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("resolveStore", () => {
  test("a run dir, a database file, and air-agent JSON (imported into a fresh database)", () => {
    expect(resolveStore(runDir)).toEqual({ dbPath: join(runDir, "air.db"), imported: false });
    expect(resolveStore(dbPath)).toEqual({ dbPath, imported: false });
    const db = openStore(dbPath, { readonly: true });
    const records = exportAirAgent(db, 1);
    db.$client.close();
    const folder = join(dir, "air-agent-out");
    mkdirSync(folder);
    for (const [i, r] of records.entries()) writeFileSync(join(folder, `traj_${i}.json`), JSON.stringify(r));
    const imported = resolveStore(folder);
    expect(imported.imported).toBe(true);
    const copy = openStore(imported.dbPath, { readonly: true });
    expect(copy.$client.query("SELECT count(*) AS n FROM trajectories").get()).toEqual({ n: records.length });
    copy.$client.close();
    rmSync(resolve(imported.dbPath, ".."), { recursive: true, force: true });
    expect(() => resolveStore(join(dir, "missing"))).toThrow("no such file");
  });
});
