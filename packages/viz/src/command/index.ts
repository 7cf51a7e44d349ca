/**
 * The `viz` command (`@air/viz/command`): arguments, the store to show (a run dir, a database, or air-agent JSON
 * imported into a fresh store) and eval report comparisons. The dashboard itself (`@air/viz`) only reads.
 */
export { type VizCommandOptions, vizMain } from "./command.ts";
export { comparisonView, profileChart, readComparison } from "./compare-files.ts";
export { resolveStore } from "./store-target.ts";
