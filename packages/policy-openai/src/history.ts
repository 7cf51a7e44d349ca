import type { Message } from "@air/core";

/** How much of a long conversation the policy sends (MLGym's LastNObservations, generalised). */
export interface HistoryOptions {
  /** Messages at the start that are always sent whole (system prompt, demonstrations, task). */
  keep_first: number;
  /** User messages (observations) after those that are sent whole, counted from the end; 0 keeps all. */
  last_observations: number;
  /** Replaces an older observation; `{lines}` becomes its line count. */
  marker: string;
}

/**
 * Keeps the first `keep_first` messages and the last `last_observations` observations; older observations
 * are replaced by `marker`. The policy's own (assistant) messages are always kept, as in MLGym.
 * @example
 * processHistory(messages, { keep_first: 2, last_observations: 5, marker: "Old output omitted ({lines} lines)" })
 */
export function processHistory(messages: Message[], options: HistoryOptions): Message[] {
  if (options.last_observations <= 0) return messages;
  const observations: number[] = [];
  messages.forEach((m, i) => {
    if (i >= options.keep_first && m.role === "user") observations.push(i);
  });
  const elide = new Set(observations.slice(0, Math.max(0, observations.length - options.last_observations)));
  if (elide.size === 0) return messages;
  return messages.map((m, i) =>
    elide.has(i) ? { ...m, content: options.marker.replaceAll("{lines}", String(lineCount(m.content))) } : m,
  );
}

function lineCount(text: string): number {
  return text === "" ? 0 : text.split("\n").length;
}
