import { afterAll, describe } from "bun:test";
import { removeTestRunDirs } from "./testing/context.ts";
import { snapshotSuite } from "./testing/snapshot-suite.ts";
import { sharedSuite } from "./testing/suite.ts";

afterAll(removeTestRunDirs);

describe("mlgym env, local runtime", () => {
  sharedSuite("local", true);
  snapshotSuite("local", true);
});
