/**
 * Loaded once before the test files (bunfig.toml `[test] preload`): tests without a timeout of their own get
 * DEFAULT_TEST_TIMEOUT_MS instead of bun's 5 s. Docker, Python and browser tests start real processes, and CI runs on a
 * busy 2-core machine: a slow machine makes a test slower, never red. Bun 1.4.5 applies this only to the first file
 * of a run (a 6 s test or beforeAll in the second file failed at 5 s) and does not read bunfig's `[test] timeout`,
 * so the test command itself passes it: `bun run test` is `bun test --timeout 120000` (package.json), which holds
 * for every file, tests and hooks alike.
 */
import { setDefaultTimeout } from "bun:test";

export const DEFAULT_TEST_TIMEOUT_MS = 120_000;

setDefaultTimeout(DEFAULT_TEST_TIMEOUT_MS);
