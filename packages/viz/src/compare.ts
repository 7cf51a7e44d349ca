import type { Point } from "./derived.ts";

/** One performance-profile chart: ρ(τ) per method (legend name → points), with each method's AUP. */
export interface ProfileChart {
  title: string;
  points: Record<string, Point[]>;
  aup: Record<string, number>;
}

/**
 * `eval compare` results as the dashboard shows them: the table, and the best/last performance profiles. The
 * dashboard only draws it; the `viz` command computes it (command/compare-files.ts).
 */
export interface ComparisonView {
  methods: string[];
  table: string;
  profiles: ProfileChart[];
}
