import { readFile, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import TOML from "@iarna/toml";
import { type HarborTaskConfig, harborTaskConfigSchema } from "./task-config.ts";

/** Harbor's paths inside the task's sandbox (harbor `EnvironmentPaths`). */
export const HARBOR_PATHS = {
  logs: "/logs",
  agentLogs: "/logs/agent",
  verifierLogs: "/logs/verifier",
  tests: "/tests",
  solution: "/solution",
  rewardText: "/logs/verifier/reward.txt",
  rewardJson: "/logs/verifier/reward.json",
  testStdout: "/logs/verifier/test-stdout.txt",
} as const;

/** A task folder that cannot be used; the message names the folder and the file. */
export class HarborTaskError extends Error {
  constructor(
    readonly folder: string,
    readonly file: string,
    readonly why: string,
  ) {
    super(`harbor task ${folder}: ${file}: ${why}`);
    this.name = "HarborTaskError";
  }
}

/** One Harbor task folder, read and checked. */
export interface HarborTask {
  /** The folder's name: the task's id in examples, tables and the store. */
  name: string;
  /** Absolute path of the folder. */
  dir: string;
  instruction: string;
  config: HarborTaskConfig;
  /** `environment/Dockerfile` when there is one (else `config.environment.docker_image` is the image). */
  dockerfile?: string;
  /** `solution/solve.sh` when there is one (the oracle; never shown to the agent). */
  solution?: string;
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

function describeIssues(error: { issues: Array<{ path: PropertyKey[]; message: string }> }): string {
  return error.issues.map((i) => `${i.path.map(String).join(".") || "(root)"}: ${i.message}`).join("; ");
}

/**
 * Reads one Harbor task folder: `task.toml` (Harbor's schema), `instruction.md`, `environment/` with a
 * `Dockerfile` or `[environment] docker_image`, `tests/test.sh`, optional `solution/solve.sh`. Throws a
 * {@link HarborTaskError} naming the folder and the file for anything missing or malformed.
 * @example const task = await loadHarborTask("data/harbor/hello-file"); task.config.verifier.timeout_sec // 60
 */
export async function loadHarborTask(dir: string): Promise<HarborTask> {
  const name = basename(dir);
  const fail = (file: string, why: string) => new HarborTaskError(dir, file, why);
  if (
    !(await stat(dir).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    throw fail(".", "not a directory");
  const tomlPath = join(dir, "task.toml");
  const tomlText = await readFile(tomlPath, "utf8").catch(() => undefined);
  if (tomlText === undefined) throw fail("task.toml", "missing");
  let raw: unknown;
  try {
    raw = TOML.parse(tomlText);
  } catch (error) {
    throw fail("task.toml", `not valid TOML: ${(error as Error).message.split("\n")[0]}`);
  }
  const parsed = harborTaskConfigSchema.safeParse(raw);
  if (!parsed.success) throw fail("task.toml", describeIssues(parsed.error));
  const config = parsed.data;
  const instruction = await readFile(join(dir, "instruction.md"), "utf8").catch(() => undefined);
  if (instruction === undefined) throw fail("instruction.md", "missing");
  if (instruction.trim() === "") throw fail("instruction.md", "empty");
  if (!(await isFile(join(dir, "tests", "test.sh")))) throw fail("tests/test.sh", "missing");
  const envDir = join(dir, "environment");
  const dockerfile = join(envDir, "Dockerfile");
  const hasDockerfile = await isFile(dockerfile);
  if (!hasDockerfile && !config.environment.docker_image)
    throw fail(
      "environment/Dockerfile",
      "missing, and task.toml sets no [environment] docker_image (one of the two says what the sandbox runs)",
    );
  const solution = join(dir, "solution", "solve.sh");
  return {
    name,
    dir,
    instruction,
    config,
    dockerfile: hasDockerfile ? dockerfile : undefined,
    solution: (await isFile(solution)) ? solution : undefined,
  };
}
