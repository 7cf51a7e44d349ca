import { type AppOptions, createApp, type VizApp } from "./app.ts";

export interface ServeOptions extends AppOptions {
  dbPath: string;
  port?: number;
  /** Interface to bind; 127.0.0.1 unless asked otherwise. */
  host?: string;
}

export interface VizServer {
  url: string;
  app: VizApp;
  stop(): Promise<void>;
}

/**
 * Serves the dashboard over `dbPath` (read-only) on 127.0.0.1.
 * @example const server = serve({ dbPath: "outputs/run/air.db", port: 8700 }); console.log(server.url);
 */
export function serve(options: ServeOptions): VizServer {
  const { dbPath, port, host, ...appOptions } = options;
  const app = createApp(dbPath, appOptions);
  const hostname = host ?? "127.0.0.1";
  // Live pages hold a server-sent-events stream open; it sends a keep-alive every 5 s, within this timeout.
  const server = Bun.serve({ fetch: app.fetch, port: port ?? 8700, hostname, idleTimeout: 30 });
  return {
    url: `http://${hostname}:${server.port}/`,
    app,
    async stop() {
      await server.stop(true);
      app.close();
    },
  };
}
