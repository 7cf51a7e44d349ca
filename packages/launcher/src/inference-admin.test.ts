import { expect, test } from "bun:test";
import { join } from "node:path";
import { resolveConfig } from "./cli.ts";
import { REPO_ROOT } from "./test-helpers.ts";

const DEFAULT = join(REPO_ROOT, "configs", "dataset", "default.toml");
const policyOf = async (args: string[]) =>
  (await resolveConfig(DEFAULT, args)).plugins.policy.config as Record<string, unknown>;

test("prime-rl's router on: the policy's admin calls go to the engine on backend_port, as prime-rl's admin_base_url", async () => {
  expect((await policyOf(["--inference.router", "true"])).admin_url).toBe("http://127.0.0.1:8100/v1");
  const moved = await policyOf(["--inference.router", "true", "--inference.backend_port", "9001"]);
  expect(moved.admin_url).toBe("http://127.0.0.1:9001/v1");
  expect((await policyOf([])).admin_url).toBeUndefined();
});

test("a contradicting admin_url, or a router on a server that is not prime-rl's, is refused naming the keys", async () => {
  const refused = async (args: string[]) => {
    try {
      await resolveConfig(DEFAULT, args);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error("accepted");
  };
  const wrong = await refused([
    "--inference.router",
    "true",
    "--policy.admin_url",
    "http://127.0.0.1:8000/v1",
  ]);
  expect(wrong).toContain("policy.admin_url");
  expect(wrong).toContain("inference.backend_port");
  expect(await refused(["--inference.router", "true", "--inference.kind", "vllm"])).toContain(
    "inference.router",
  );
  const same = await policyOf([
    "--inference.router",
    "true",
    "--policy.admin_url",
    "http://localhost:8100/v1",
  ]);
  expect(same.admin_url).toBe("http://localhost:8100/v1");
});
