import { describe, expect, test } from "bun:test";
import type { StoredTurn } from "@air/logger-sqlite";
import { turnView } from "./trajectory.ts";

const turn = (infoJson: string | null): StoredTurn => ({
  runId: 1,
  rolloutId: "r",
  idx: 2,
  promptMessagesJson: "[]",
  promptBase: 0,
  promptFromPrevious: false,
  completion: "printf x > evaluate.py",
  command: "printf x > evaluate.py",
  parseError: null,
  toolError: null,
  evaluationError: null,
  observation: "",
  stepKind: "command",
  scoresJson: null,
  reward: 0,
  rewardBreakdownJson: null,
  finishReason: "stop",
  policyVersion: 0,
  temperature: 1,
  promptTokens: 1,
  completionTokens: 1,
  logprobMean: null,
  generateMs: 1,
  envMs: 1,
  notesJson: null,
  infoJson,
  prompt: [],
  scores: null,
  rewardBreakdown: null,
});

describe("turn view", () => {
  test("a turn the env flagged as tampering is highlighted with its flags", async () => {
    const flagged = String(await turnView(turn('{"tamper":["writes-evaluation-file","metric-json"]}')));
    expect(flagged).toContain('class="turn tampered"');
    expect(flagged).toContain("tamper: writes-evaluation-file, metric-json");
    const plain = String(await turnView(turn('{"exitCode":0}')));
    expect(plain).not.toContain("tamper");
    expect(String(await turnView(turn(null)))).not.toContain("tampered");
  });
});
