import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { EventHandlers, PluginContext } from "@air/core";
import Docker from "dockerode";

/** The repository root: an MLGym-format root with air's own tasks. */
export const REPO_ROOT = resolve(import.meta.dir, "../../../..");
export const TEST_IMAGE = process.env.AIR_TEST_IMAGE ?? "air-mlgym-test:latest";

type SandboxState = Parameters<EventHandlers["sandbox:state"]>[0];

const runDirs: string[] = [];

/** Removes every run dir `testContext` made (call it in afterAll). */
export function removeTestRunDirs(): void {
  for (const dir of runDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A plugin context for tests: a temporary run dir, quiet logs, and the sandbox events it saw. */
export function testContext(runName: string): PluginContext & { events: SandboxState[] } {
  const events: SandboxState[] = [];
  const log = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
  // The pid in the name lets a test find every container of this process (containers are labelled by run dir).
  const runDir = mkdtempSync(join(tmpdir(), `air-mlgym-test-${process.pid}-`));
  runDirs.push(runDir);
  return {
    log,
    runDir,
    configDir: REPO_ROOT,
    runName,
    seed: 0,
    modelName: "test",
    signal: new AbortController().signal,
    emit: ((name: string, payload: SandboxState) => {
      if (name === "sandbox:state") events.push(payload);
    }) as PluginContext["emit"],
    events,
  };
}

/**
 * Whether docker tests can run: true when an engine answers and the test image exists. In CI (CI=true) a
 * missing engine or image throws instead, so docker tests fail rather than skip.
 */
export async function dockerAvailable(): Promise<boolean> {
  const docker = new Docker();
  const problem = await Promise.race([
    docker
      .ping()
      .then(() => docker.getImage(TEST_IMAGE).inspect())
      .then(
        () => undefined,
        (e: unknown) => `docker engine or image ${TEST_IMAGE} unavailable: ${(e as Error).message}`,
      ),
    new Promise<string>((r) => setTimeout(() => r("docker engine did not answer within 5 s"), 5000)),
  ]);
  if (!problem) return true;
  if (process.env.CI === "true") throw new Error(`${problem} (CI=true: docker tests must run)`);
  console.warn(
    `skipping docker tests: ${problem}. Run: bash scripts/ensure-docker && bash scripts/build-test-image`,
  );
  return false;
}
