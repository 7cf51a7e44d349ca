import { describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runProcess } from "@air/sandbox";
import { checkTasks } from "./checks.ts";
import { mlgymConfigSchema } from "./config.ts";
import { REPO_ROOT } from "./testing/context.ts";

const FIXTURES = join(import.meta.dir, "..", "fixtures");

describe("checkTasks", () => {
  test("the project's tasks and the local sandbox pass", async () => {
    const config = mlgymConfigSchema.parse({ tasks: ["apartmentRent", "rpsTournament"], runtime: "local" });
    const results = await checkTasks(config, REPO_ROOT);
    expect(results.filter((r) => r.status !== "ok")).toEqual([]);
    expect(results.map((r) => r.name)).toContain("task apartmentRent: baseline scores");
    expect(results.map((r) => r.name)).toContain("local sandbox (bwrap)");
  });

  test("a task that cannot be proxied fails the check (rl refuses it) unless env.allow_forgeable names it", async () => {
    const base = { mlgym_root: join(FIXTURES, "class-game"), tasks: ["classGame"], runtime: "docker" };
    const refused = await checkTasks(mlgymConfigSchema.parse(base), "/");
    const failed = refused.filter((r) => r.status === "fail");
    expect(failed.map((r) => r.name)).toEqual(["task classGame: reward integrity"]);
    expect(failed[0]?.message).toContain("strategy.Player, a class");
    const allowed = await checkTasks(
      mlgymConfigSchema.parse({ ...base, allow_forgeable: ["classGame"] }),
      "/",
    );
    expect(allowed.filter((r) => r.status === "fail")).toEqual([]);
  });

  test("data a helper script makes: the exact missing path and the command, then ok once made", async () => {
    const root = mkdtempSync(join(tmpdir(), "air-checks-"));
    try {
      cpSync(join(FIXTURES, "generated-data"), root, { recursive: true });
      const config = mlgymConfigSchema.parse({ mlgym_root: root, tasks: ["generated"], runtime: "docker" });
      const before = await checkTasks(config, "/");
      const failed = before.filter((r) => r.status === "fail");
      expect(failed).toHaveLength(1);
      expect(failed[0]?.name).toBe("task generated");
      expect(failed[0]?.message).toContain(`looked for ${root}/data/generatedTask/data`);
      expect(failed[0]?.message).toContain(
        `make it with: cd ${root}/data/generatedTask/_helpers && python _generate_split.py`,
      );
      const helpers = join(root, "data", "generatedTask", "_helpers");
      await runProcess(["/usr/bin/python3", "_generate_split.py"], { cwd: helpers, timeoutMs: 30_000 });
      const after = await checkTasks(config, "/");
      expect(after.filter((r) => r.status !== "ok")).toEqual([]);
      expect(after.find((r) => r.name === "task generated")?.message).toContain("(id generatedTask)");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("a task named by id finds its file; an unknown task names where it looked", async () => {
    const config = mlgymConfigSchema.parse({
      mlgym_root: join(FIXTURES, "known-game"),
      tasks: ["prisonersDilemma", "nosuchTask"],
      runtime: "docker",
    });
    const results = await checkTasks(config, "/");
    expect(results.find((r) => r.name === "task prisonersDilemma")?.status).toBe("ok");
    const missing = results.find((r) => r.name === "task nosuchTask");
    expect(missing?.status).toBe("fail");
    expect(missing?.message).toContain(join(FIXTURES, "known-game", "configs", "tasks", "nosuchTask.yaml"));
  });

  test("a missing MLGym root is one clear failure", async () => {
    const config = mlgymConfigSchema.parse({ mlgym_root: "/nonexistent/mlgym", tasks: ["titanic"] });
    expect(await checkTasks(config, "/")).toEqual([
      {
        name: "MLGym root",
        status: "fail",
        message: '/nonexistent/mlgym does not exist (env.mlgym_root = "/nonexistent/mlgym")',
      },
    ]);
  });
});
