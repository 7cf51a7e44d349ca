/**
 * The transport floor of a long-horizon turn, in a fresh process: `inFlight` bare clients, each playing 30 turns
 * against the same simulated vLLM servers with the request the `openai` policy sends (the whole conversation,
 * vLLM's sampling fields, `return_token_ids`) and the answer read with `JSON.parse` — no loop, policy, store or
 * strategy. Its CPU per request is what one HTTP request per turn costs in Bun, whatever the orchestrator does
 * around it. Prints a JSON FloorSample. Usage: bun scale-floor-worker.ts '<ScaleInput JSON>'
 */
import { kindRequestFields } from "@air/policy-openai";
import { latencySampler } from "../sim/latency.ts";
import type { ScaleInput } from "./scale-worker.ts";

export interface FloorSample {
  requests: number;
  /** The worker's user + system CPU ÷ requests. */
  cpuMsPerRequest: number;
  /** Mean characters of a request body and of an answer. */
  requestChars: number;
  answerChars: number;
}

const input = JSON.parse(process.argv[2] ?? "{}") as ScaleInput;
const envLatency = latencySampler(input.env, input.seed + 1);
const fields = kindRequestFields("vllm", { returnTokenIds: true, vllmExtras: true, version: 0 });
const task = "Improve the baseline model's score on the held-out split. ".repeat(
  Math.ceil(input.taskChars / 59),
);
const observation = new TextEncoder().encode("x".repeat(input.observationChars));
const decoder = new TextDecoder();
let requests = 0;
let requestChars = 0;
let answerChars = 0;

async function rollout(index: number): Promise<void> {
  const url = `${input.baseUrls[index % input.baseUrls.length]}/chat/completions`;
  const messages = [
    { role: "system", content: "You are an ML research agent working in a shell." },
    { role: "user", content: task.slice(0, input.taskChars) },
  ];
  for (let turn = 0; turn < input.maxTurns; turn++) {
    const body = JSON.stringify({
      model: "sim",
      messages,
      temperature: 1,
      top_p: 1,
      max_completion_tokens: 4096,
      n: 1,
      ...fields,
    });
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    const text = await response.text();
    const answer = JSON.parse(text) as { choices: Array<{ message: { content: string } }> };
    requests++;
    requestChars += body.length;
    answerChars += text.length;
    messages.push({ role: "assistant", content: answer.choices[0]?.message.content ?? "" });
    await Bun.sleep(envLatency());
    messages.push({ role: "user", content: decoder.decode(observation) });
  }
}

// Warm-up: a few requests so JIT and connections are in place, then the measured run.
await Promise.all(Array.from({ length: 4 }, (_, i) => rollout(i)));
requests = 0;
requestChars = 0;
answerChars = 0;
const cpu0 = process.cpuUsage();
await Promise.all(Array.from({ length: input.inFlight }, (_, i) => rollout(i)));
const cpu = process.cpuUsage(cpu0);
const sample: FloorSample = {
  requests,
  cpuMsPerRequest: (cpu.user + cpu.system) / 1000 / Math.max(1, requests),
  requestChars: requestChars / Math.max(1, requests),
  answerChars: answerChars / Math.max(1, requests),
};
console.log(JSON.stringify(sample));
process.exit(0);
