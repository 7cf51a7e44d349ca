import { createLogger, type LogSink } from "../log.ts";
import type { PluginContext } from "../plugin.ts";

/**
 * A whole plugin context for calling a plugin's `create` directly in a test: neutral run facts, a logger into
 * `sink` (default: nowhere), a never-aborted signal, events dropped; `fields` replace any of them.
 * @example const created = await plugin.create(schema.parse({}), makeContext({ sink: (_l, _s, m) => logs.push(m) }));
 */
export function makeContext(fields: Partial<PluginContext> & { sink?: LogSink } = {}): PluginContext {
  const { sink = () => {}, ...rest } = fields;
  return {
    log: createLogger("test", sink),
    runDir: "/tmp/air-test-run",
    configDir: "/tmp",
    runName: "test",
    seed: 0,
    modelName: "test-model",
    signal: new AbortController().signal,
    emit: () => {},
    ...rest,
  };
}
