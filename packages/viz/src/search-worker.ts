/**
 * A worker thread of the dashboard that keeps the store's search index (`<store>.search`, logger-sqlite's
 * `SearchIndex`) caught up: it indexes what was written since its last pass, a chunk at a time, then checks
 * again every `idleMs`. It runs off the request thread, so building the index of a large store never delays a
 * page; until it is caught up, searches scan the part not indexed yet.
 */
import { Database } from "bun:sqlite";
import { SearchIndex } from "@air/logger-sqlite/read";

declare const self: Worker;

export interface SearchWorkerStart {
  dbPath: string;
  idleMs: number;
}

self.onmessage = (event: MessageEvent<SearchWorkerStart>) => {
  const { dbPath, idleMs } = event.data;
  const index = SearchIndex.open(dbPath, { write: true });
  if (!index) {
    postMessage({ state: "unavailable" });
    return;
  }
  const store = new Database(dbPath, { readonly: true });
  store.exec("PRAGMA busy_timeout = 2000");
  const pass = () => {
    let indexed = 0;
    try {
      indexed = index.catchUp(store, 2000);
    } catch (error) {
      postMessage({ state: "error", message: error instanceof Error ? error.message : String(error) });
    }
    if (indexed === 0) postMessage({ state: "caught-up" });
    setTimeout(pass, indexed > 0 ? 0 : idleMs);
  };
  pass();
};
