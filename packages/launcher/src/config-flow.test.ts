import { expect, test } from "bun:test";
import { configFlow } from "../../../scripts/config-flow.ts";

// Issue 35 §2: following the config from `launchRun` reads as a straight line. A ratchet: lower these when the
// flow gets shorter, never raise them (`bun scripts/config-flow.ts --trace` shows each step).
const MAX_VISITS = 15;
const MAX_RETURNS = 5;

test("the config's flow from launchRun stays a straight line (issue 35 §2's measure)", () => {
  const flow = configFlow();
  if (flow.visits > MAX_VISITS || flow.returns > MAX_RETURNS) console.error(flow.trace.join("\n"));
  expect(flow.visits).toBeLessThanOrEqual(MAX_VISITS);
  expect(flow.returns).toBeLessThanOrEqual(MAX_RETURNS);
  // the measure reads the source: a walk that found nothing would pass the bounds above vacuously
  expect(flow.trace[0]).toBe("launch.ts → run-plan.ts (planOf)");
});
