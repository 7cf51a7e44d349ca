/** One request the fake W&B server got. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: { authorization: string | null; "content-type": string | null };
  /** Parsed JSON, or the raw text of a non-JSON body (a PUT upload). */
  body: unknown;
}

export interface FakeWandb {
  baseUrl: string;
  requests: RecordedRequest[];
  /** The next `count` requests whose path starts with `prefix` get `status` instead of an answer. */
  failNext(prefix: string, status: number, count?: number): void;
  graphql(operationName: string): Array<{ variables: Record<string, unknown>; query: string }>;
  stop(): void;
}

/**
 * A local stand-in for W&B's API (Bun.serve on 127.0.0.1) that records every request and answers the way the
 * real server's answers are read by the SDKs: `Viewer`, `UpsertBucket`, `RunUploadUrls` (URLs back to itself),
 * `RunResumeStatus` (history lines received per run), the file stream and uploads.
 * @example const server = fakeWandb(); … server.requests … server.stop();
 */
export function fakeWandb(): FakeWandb {
  const requests: RecordedRequest[] = [];
  const failures: Array<{ prefix: string; status: number; count: number }> = [];
  /** History lines held per run ("entity/project/id"), as `RunResumeStatus` reports them. */
  const history = new Map<string, number>();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      const text = await req.text();
      let body: unknown = text;
      if (req.headers.get("content-type")?.includes("application/json")) body = JSON.parse(text);
      requests.push({
        method: req.method,
        path: url.pathname,
        headers: {
          authorization: req.headers.get("authorization"),
          "content-type": req.headers.get("content-type"),
        },
        body,
      });
      const failure = failures.find((f) => url.pathname.startsWith(f.prefix) && f.count > 0);
      if (failure) {
        failure.count--;
        return new Response("injected failure", { status: failure.status });
      }
      const stream = /^\/files\/([^/]+)\/([^/]+)\/([^/]+)\/file_stream$/.exec(url.pathname);
      if (stream) {
        // W&B keeps the history lines at the offsets the stream names: its line count is the highest end.
        const key = stream.slice(1, 4).map(decodeURIComponent).join("/");
        const h = (body as { files?: Record<string, { offset: number; content: string[] }> }).files?.[
          "wandb-history.jsonl"
        ];
        if (h) history.set(key, Math.max(history.get(key) ?? 0, h.offset + h.content.length));
      }
      if (url.pathname !== "/graphql") return Response.json({});
      const q = body as { operationName: string; variables: Record<string, unknown> };
      const v = q.variables;
      if (q.operationName === "Viewer")
        return Response.json({ data: { viewer: { id: "v1", entity: "test-entity" } } });
      if (q.operationName === "UpsertBucket") {
        const project = { id: "p1", name: v.project, entity: { id: "e1", name: v.entity } };
        return Response.json({
          data: {
            upsertBucket: {
              bucket: { id: "b1", name: v.name, displayName: v.displayName, project },
              inserted: true,
            },
          },
        });
      }
      if (q.operationName === "RunUploadUrls") {
        const files = v.files as string[];
        const edges = files.map((name) => ({
          node: { name, url: `${url.origin}/upload/${name}`, updatedAt: null },
        }));
        return Response.json({
          data: {
            model: {
              bucket: { id: "b1", files: { uploadHeaders: ["Content-Type:application/json"], edges } },
            },
          },
        });
      }
      if (q.operationName === "RunResumeStatus") {
        const lines = history.get(`${v.entity}/${v.project}/${v.name}`);
        const bucket = lines === undefined ? null : { id: "b1", name: v.name, historyLineCount: lines };
        return Response.json({ data: { model: { id: "p1", bucket } } });
      }
      return Response.json({ errors: [{ message: `unknown operation ${q.operationName}` }] });
    },
  });
  return {
    baseUrl: `http://127.0.0.1:${server.port}`,
    requests,
    failNext: (prefix, status, count = 1) => failures.push({ prefix, status, count }),
    graphql: (operationName) =>
      requests
        .filter((r) => r.path === "/graphql")
        .map((r) => r.body as { operationName: string; variables: Record<string, unknown>; query: string })
        .filter((b) => b.operationName === operationName),
    stop: () => server.stop(true),
  };
}
