/**
 * Loaded before every test file (bunfig.toml `[test] preload`): each test without a timeout of its own gets
 * DEFAULT_TEST_TIMEOUT_MS instead of bun's 5 s. Docker, Python and browser tests start real processes, and CI runs on a
 * busy 2-core machine: a slow machine makes a test slower, never red. (bunfig's `[test] timeout` key is not read
 * by the bun this repo runs, 1.4: a test of 6 s failed at 5 s with it set.)
 */
import { setDefaultTimeout } from "bun:test";

export const DEFAULT_TEST_TIMEOUT_MS = 120_000;

setDefaultTimeout(DEFAULT_TEST_TIMEOUT_MS);
