import type { ComparisonView, ProfileChart } from "./compare.ts";
import type { Point } from "./derived.ts";

/** A stepped ρ(τ) line rising from `start` to 1 in three steps over τ ∈ [0, 0.6]. */
function line(start: number): Point[] {
  const rise = (1 - start) / 3;
  return [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6].map(
    (t, i): Point => [t, Math.min(1, start + rise * Math.floor(i / 2))],
  );
}

function chart(title: string, aup: Record<string, number>, starts: Record<string, number>): ProfileChart {
  const points: Record<string, Point[]> = {};
  for (const [method, value] of Object.entries(aup))
    points[`${method} · AUP ${value.toFixed(3)}`] = line(starts[method] ?? 0);
  return { title, points, aup };
}

/**
 * A comparison as the `viz` command hands it to the dashboard (computed by the launcher's `readComparison`),
 * made up for tests of the page: two methods and the baseline, best and last profiles.
 * @example serve({ dbPath, port: 0, comparison: comparisonFixture() })
 */
export function comparisonFixture(): ComparisonView {
  const starts = { "step-0": 0.34, "step-50": 0.67, baseline: 0 };
  return {
    methods: ["step-0", "step-50"],
    table: "method   best AUP   last AUP\nstep-0   0.812      0.790\nstep-50  0.951      0.933",
    profiles: [
      chart(
        "Performance profile: best attempt",
        { "step-0": 0.812, "step-50": 0.951, baseline: 0.5 },
        starts,
      ),
      chart(
        "Performance profile: last submission",
        { "step-0": 0.79, "step-50": 0.933, baseline: 0.5 },
        starts,
      ),
    ],
  };
}
