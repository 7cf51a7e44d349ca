/** How the simulated vLLM server turns text and chat messages into token ids. */
export interface SimTokenizer {
  /** Token ids of plain text (`/tokenize {prompt}`, replies). */
  encode(text: string): number[];
  /** Prompt ids of chat messages under the server's chat template (`/tokenize {messages}`, `prompt_token_ids`). */
  render(messages: Array<{ role: string; content: string }>, generationPrompt: boolean): number[];
  /** The text of the first `count` tokens of `text` (a reply cut at max_tokens). */
  prefix(text: string, count: number): string;
}

const encoder = new TextEncoder();

/** The byte tokenizer's chat template, rendered. */
export function renderPrompt(
  messages: Array<{ role: string; content: string }>,
  generationPrompt = true,
): string {
  const turns = messages.map((m) => `<|${m.role}|>${m.content}<|end|>`).join("");
  return generationPrompt ? `${turns}<|assistant|>` : turns;
}

/** The byte tokenizer: UTF-8 bytes (token ids checkable by hand). */
export function fakeTokens(text: string): number[] {
  return [...encoder.encode(text)];
}

/** The server's logprob of a sampled token (the same for every tokenizer). */
export function fakeLogprob(tokenId: number): number {
  return -((tokenId % 13) / 10) - 0.05;
}

/** UTF-8 bytes over `renderPrompt`'s template: the default, for tests that check ids by hand. */
export const byteTokenizer: SimTokenizer = {
  encode: fakeTokens,
  render: (messages, generationPrompt) => fakeTokens(renderPrompt(messages, generationPrompt)),
  prefix: (text, count) => new TextDecoder().decode(new Uint8Array(fakeTokens(text).slice(0, count))),
};

/**
 * Four characters per token, ids hashed from them (stable, cheap: the benchmarks' long prompts).
 * @example simTokens("abcdefgh").length // 2
 */
export function simTokens(text: string): number[] {
  const ids: number[] = [];
  for (let i = 0; i < text.length; i += 4) {
    let h = 17;
    for (let j = i; j < Math.min(i + 4, text.length); j++) h = (h * 31 + text.charCodeAt(j)) % 32_000;
    ids.push(h);
  }
  return ids;
}

const ROLE_IDS: Record<string, number> = { system: 32_001, user: 32_002, assistant: 32_003, tool: 32_004 };
const END_ID = 32_000;

/**
 * Prompt ids of `messages` as a chat template renders them: per message its role token, its content's
 * `simTokens`, an end token; then the assistant role token (the generation prompt). Like a real template the
 * rendering is prefix-consistent: turn k+1's prompt starts with turn k's prompt, its completion ids and the end
 * token, so a rollout's prompts share their prefix token for token.
 * @example renderIds([{ role: "user", content: "abcd" }]) // [32002, simTokens("abcd")[0], 32000, 32003]
 */
export function renderIds(
  messages: Array<{ role: string; content: string }>,
  generationPrompt = true,
): number[] {
  const ids: number[] = [];
  for (const m of messages) {
    ids.push(ROLE_IDS[m.role] ?? 32_005);
    for (const id of simTokens(m.content)) ids.push(id);
    ids.push(END_ID);
  }
  if (generationPrompt) ids.push(ROLE_IDS.assistant as number);
  return ids;
}

/** `simTokens` / `renderIds`: what the benchmarks' simulated server uses. */
export const charTokenizer: SimTokenizer = {
  encode: simTokens,
  render: renderIds,
  prefix: (text, count) => text.slice(0, count * 4),
};
