/**
 * Regenerates src/fixtures/sdk-0.5.1-requests.json: runs the official JS SDK against a local recording server
 * and writes what it sent. `@wandb/sdk` is not a dependency of air; run this from a scratch directory:
 *
 *   mkdir /tmp/wb && cd /tmp/wb && bun init -y && bun add @wandb/sdk@0.5.1 graphql
 *   cp <repo>/packages/logger-wandb/scripts/capture-sdk.ts . && bun capture-sdk.ts <repo>/packages/logger-wandb/src/fixtures/sdk-0.5.1-requests.json
 */
const out = process.argv[2];
if (!out) throw new Error("usage: bun capture-sdk.ts <output.json>");
const requests: Array<Record<string, unknown>> = [];
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const text = await req.text();
    const url = new URL(req.url);
    requests.push({
      method: req.method,
      path: url.pathname,
      headers: {
        authorization: "Basic <base64 of api:KEY>",
        "content-type": req.headers.get("content-type"),
      },
      body: JSON.parse(text),
    });
    if (url.pathname !== "/graphql") return Response.json({});
    const q = JSON.parse(text) as { operationName: string; variables: Record<string, unknown> };
    if (q.operationName === "Viewer")
      return Response.json({
        data: { viewer: { id: "v", entity: "test-entity", flags: null, teams: { edges: [] } } },
      });
    const project = { id: "p", name: q.variables.project, entity: { id: "e", name: "test-entity" } };
    const bucket = { id: "b1", name: q.variables.name, displayName: q.variables.displayName, project };
    return Response.json({ data: { upsertBucket: { bucket, inserted: true } } });
  },
});
process.env.WANDB_BASE_URL = `http://127.0.0.1:${server.port}`;
process.env.WANDB_API_KEY = "0123456789abcdef0123456789abcdef01234567";
const sdk = "@wandb/sdk";
const { default: wandb } = await import(sdk);
await wandb.init({
  project: "air-test",
  config: { orchestrator: { batch_size: 4 } },
  name: "fixture",
  id: "abc12345",
});
wandb.log({ "reward/mean": 0.5 }, 0);
wandb.log({ "reward/mean": 0.75 }, 1);
await wandb.finish();
server.stop(true);
await Bun.write(
  out,
  JSON.stringify(
    {
      sdk: "@wandb/sdk@0.5.1",
      runtime: `bun ${Bun.version}`,
      note: "requests the official JS SDK sent to a recording server (scripts/capture-sdk.ts)",
      requests,
    },
    null,
    1,
  ),
);
