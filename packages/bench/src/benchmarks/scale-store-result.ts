import type { Recorded } from "./store-record.ts";

/** What `bench scale-store` measures (its own file so the report and the million-turn store need not import the benchmark). */
export interface ScaleStoreResult {
  long: Recorded[];
  /** Section 5's workload (5-turn trajectories, short prompts), recorded alongside each repeat. */
  short: Recorded[];
  newCharsPerTurn: number;
  million: {
    turns: number;
    path: string;
    cached: boolean;
    buildS?: number;
    turnsPerS?: number;
    /** When the cached store was built and the machine's 1-minute load then (from its `.json` beside it). */
    builtAt?: string;
    load1?: number;
    /** Set when the cached store of an older schema was copied and migrated instead of built again. */
    migratedFrom?: string;
    migrateS?: number;
    /** Seconds this run spent bringing the search index (`<store>.search`) up to date, and rows it indexed. */
    searchS: number;
    searchRows: number;
  };
  pages: Record<string, number[]>;
  huge: Record<string, number[]>;
  goals: string[];
}
