/**
 * A tiny random llama-architecture model in GGUF v3, written by hand, so tests can run a real llama.cpp server
 * without downloading weights. The vocabulary is SentencePiece-style ("llama" tokenizer): `<unk>`, `<s>`,
 * `</s>`, the ChatML markers `<|im_start|>` / `<|im_end|>` as control tokens, the 256 byte tokens `<0x00>`…
 * `<0xFF>`, and printable ASCII characters plus `▁` as pieces. Weights are seeded random F32, except for one
 * hidden dimension (0) that carries a constant through the residual stream (no layer writes to it) and lets
 * the output layer push some tokens far down: control tokens, and byte tokens other than printable ASCII and
 * newline, so replies are printable text (llama.cpp merges the logprob entries of tokens that end a broken
 * UTF-8 sequence), and `<|im_end|>` up, so replies end by themselves now and then.
 *
 * Format facts (GGUF v3: header, metadata key/values, tensor infos, 32-byte aligned data; llama key names and
 * tensor names/shapes) were taken from ggml's `docs/gguf.md` and llama.cpp's `src/llama-arch.cpp` /
 * `gguf-py/gguf/constants.py`; see the package README for the pinned version.
 */
import { writeFileSync } from "node:fs";

/** Sizes of the tiny model. */
export interface TinyGgufOptions {
  /** Hidden size (a multiple of `heads`). */
  embedding: number;
  heads: number;
  layers: number;
  feedForward: number;
  /** `llama.context_length`: the training context the server reports and defaults its window to. */
  contextLength: number;
  seed: number;
}

export const defaultTinyGguf: TinyGgufOptions = {
  embedding: 64,
  heads: 4,
  layers: 2,
  feedForward: 128,
  contextLength: 2048,
  seed: 1,
};

/** `<|im_end|>`: the end-of-generation token. */
const EOS = 4;
/** Value of hidden dimension 0 in every token embedding. */
const CARRIER = 4;

const CHATML =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** GGUF metadata value types (ggml `gguf_type`). */
const T = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 } as const;
/** llama.cpp token types. */
const TOKEN = { normal: 1, unknown: 2, control: 3, byte: 6 } as const;

type Value =
  | { type: "u32" | "i32" | "f32"; value: number }
  | { type: "bool"; value: boolean }
  | { type: "string"; value: string }
  | { type: "array"; of: "string"; value: string[] }
  | { type: "array"; of: "f32" | "i32"; value: number[] };

class Writer {
  private chunks: Uint8Array[] = [];
  size = 0;
  private push(bytes: Uint8Array): void {
    this.chunks.push(bytes);
    this.size += bytes.length;
  }
  /** A little-endian number of `size` bytes, as `write` sets it at offset 0. */
  private fixed(size: number, write: (view: DataView) => void): void {
    const b = new Uint8Array(size);
    write(new DataView(b.buffer));
    this.push(b);
  }
  u32(n: number): void {
    this.fixed(4, (v) => v.setUint32(0, n, true));
  }
  i32(n: number): void {
    this.fixed(4, (v) => v.setInt32(0, n, true));
  }
  u64(n: number): void {
    this.fixed(8, (v) => v.setBigUint64(0, BigInt(n), true));
  }
  f32(n: number): void {
    this.fixed(4, (v) => v.setFloat32(0, n, true));
  }
  string(s: string): void {
    const bytes = new TextEncoder().encode(s);
    this.u64(bytes.length);
    this.push(bytes);
  }
  bytes(b: Uint8Array): void {
    this.push(b);
  }
  pad(alignment: number): void {
    const rest = this.size % alignment;
    if (rest !== 0) this.push(new Uint8Array(alignment - rest));
  }
  value(v: Value): void {
    if (v.type === "array") {
      this.u32(T.array);
      this.u32(T[v.of]);
      this.u64(v.value.length);
      for (const item of v.value) {
        if (typeof item === "string") this.string(item);
        else if (v.of === "f32") this.f32(item);
        else this.i32(item);
      }
      return;
    }
    this.u32(T[v.type]);
    if (v.type === "string") this.string(v.value);
    else if (v.type === "bool") this.bytes(new Uint8Array([v.value ? 1 : 0]));
    else if (v.type === "f32") this.f32(v.value);
    else if (v.type === "i32") this.i32(v.value);
    else this.u32(v.value);
  }
  concat(): Uint8Array {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

/** The tiny vocabulary: tokens, scores and types in id order. */
export function tinyVocab(): { tokens: string[]; scores: number[]; types: number[] } {
  const tokens = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"];
  const types: number[] = [TOKEN.unknown, TOKEN.control, TOKEN.control, TOKEN.control, TOKEN.control];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
    types.push(TOKEN.byte);
  }
  tokens.push("▁");
  types.push(TOKEN.normal);
  for (let c = 33; c < 127; c++) {
    tokens.push(String.fromCharCode(c));
    types.push(TOKEN.normal);
  }
  return { tokens, scores: tokens.map((_, i) => -i), types };
}

/** Deterministic normal-ish numbers (xorshift32, sum of uniforms). */
function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  const uniform = () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x100000000;
  };
  return () => uniform() + uniform() + uniform() - 1.5;
}

/**
 * The bytes of a tiny random llama GGUF model with a ChatML chat template.
 * @example writeFileSync("/tmp/tiny.gguf", tinyGguf());
 */
export function tinyGguf(options: Partial<TinyGgufOptions> = {}): Uint8Array {
  const o = { ...defaultTinyGguf, ...options };
  const vocab = tinyVocab();
  const nVocab = vocab.tokens.length;
  const kv: Array<[string, Value]> = [
    ["general.architecture", { type: "string", value: "llama" }],
    ["general.name", { type: "string", value: "air-tiny-random" }],
    ["general.alignment", { type: "u32", value: 32 }],
    ["llama.context_length", { type: "u32", value: o.contextLength }],
    ["llama.embedding_length", { type: "u32", value: o.embedding }],
    ["llama.block_count", { type: "u32", value: o.layers }],
    ["llama.feed_forward_length", { type: "u32", value: o.feedForward }],
    ["llama.attention.head_count", { type: "u32", value: o.heads }],
    ["llama.attention.head_count_kv", { type: "u32", value: o.heads }],
    ["llama.rope.dimension_count", { type: "u32", value: o.embedding / o.heads }],
    ["llama.attention.layer_norm_rms_epsilon", { type: "f32", value: 1e-5 }],
    ["llama.vocab_size", { type: "u32", value: nVocab }],
    ["tokenizer.ggml.model", { type: "string", value: "llama" }],
    ["tokenizer.ggml.tokens", { type: "array", of: "string", value: vocab.tokens }],
    ["tokenizer.ggml.scores", { type: "array", of: "f32", value: vocab.scores }],
    ["tokenizer.ggml.token_type", { type: "array", of: "i32", value: vocab.types }],
    ["tokenizer.ggml.unknown_token_id", { type: "u32", value: 0 }],
    ["tokenizer.ggml.bos_token_id", { type: "u32", value: 1 }],
    ["tokenizer.ggml.eos_token_id", { type: "u32", value: 4 }],
    ["tokenizer.ggml.add_bos_token", { type: "bool", value: true }],
    ["tokenizer.ggml.add_eos_token", { type: "bool", value: false }],
    ["tokenizer.chat_template", { type: "string", value: CHATML }],
  ];
  const e = o.embedding;
  const tensors: Array<{ name: string; shape: number[]; norm?: boolean }> = [
    { name: "token_embd.weight", shape: [e, nVocab] },
    { name: "output_norm.weight", shape: [e], norm: true },
    { name: "output.weight", shape: [e, nVocab] },
  ];
  for (let i = 0; i < o.layers; i++) {
    tensors.push(
      { name: `blk.${i}.attn_norm.weight`, shape: [e], norm: true },
      { name: `blk.${i}.attn_q.weight`, shape: [e, e] },
      { name: `blk.${i}.attn_k.weight`, shape: [e, e] },
      { name: `blk.${i}.attn_v.weight`, shape: [e, e] },
      { name: `blk.${i}.attn_output.weight`, shape: [e, e] },
      { name: `blk.${i}.ffn_norm.weight`, shape: [e], norm: true },
      { name: `blk.${i}.ffn_gate.weight`, shape: [e, o.feedForward] },
      { name: `blk.${i}.ffn_up.weight`, shape: [e, o.feedForward] },
      { name: `blk.${i}.ffn_down.weight`, shape: [o.feedForward, e] },
    );
  }
  const w = new Writer();
  w.bytes(new TextEncoder().encode("GGUF"));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(kv.length);
  for (const [key, value] of kv) {
    w.string(key);
    w.value(value);
  }
  let offset = 0;
  const sizes = tensors.map((t) => t.shape.reduce((a, b) => a * b, 1) * 4);
  tensors.forEach((t, i) => {
    w.string(t.name);
    w.u32(t.shape.length);
    for (const d of t.shape) w.u64(d);
    w.u32(0); // GGML_TYPE_F32
    w.u64(offset);
    offset += Math.ceil((sizes[i] ?? 0) / 32) * 32;
  });
  w.pad(32);
  const next = random(o.seed);
  const banned = (id: number) => {
    const token = vocab.tokens[id] ?? "";
    if (vocab.types[id] === TOKEN.control || vocab.types[id] === TOKEN.unknown) return id !== EOS;
    if (vocab.types[id] !== TOKEN.byte) return false;
    const byte = Number.parseInt(token.slice(3, 5), 16);
    return !(byte === 10 || (byte >= 32 && byte < 127));
  };
  tensors.forEach((t, i) => {
    const count = (sizes[i] ?? 0) / 4;
    const data = new Float32Array(count);
    const scale = 1 / Math.sqrt(t.shape[0] ?? 1);
    for (let k = 0; k < count; k++) data[k] = t.norm ? 1 : next() * 2 * scale;
    const rowLength = t.shape[0] ?? 1;
    const rows = count / rowLength;
    if (t.name === "token_embd.weight") for (let r = 0; r < rows; r++) data[r * rowLength] = CARRIER;
    if (t.name === "output.weight") {
      for (let r = 0; r < rows; r++) data[r * rowLength] = banned(r) ? -3 : r === EOS ? 0.8 : 0;
    }
    if (t.name.endsWith("attn_output.weight") || t.name.endsWith("ffn_down.weight")) {
      data.fill(0, 0, rowLength); // output row 0: nothing is written to the carrier dimension
    }
    w.bytes(new Uint8Array(data.buffer));
    w.pad(32);
  });
  return w.concat();
}

/** Writes the tiny model to `path`. */
export function writeTinyGguf(path: string, options: Partial<TinyGgufOptions> = {}): void {
  writeFileSync(path, tinyGguf(options));
}

if (import.meta.main) {
  const path = process.argv[2];
  if (path === undefined) {
    console.error("usage: bun packages/policy-openai/src/llama/gguf.ts OUT.gguf [context_length]");
    process.exit(2);
  }
  const contextLength = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
  writeTinyGguf(path, contextLength === undefined ? {} : { contextLength });
  console.log(`wrote ${path}`);
}
