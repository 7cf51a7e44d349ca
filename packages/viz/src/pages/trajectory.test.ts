import { describe, expect, test } from "bun:test";
import type { StoredTrajectory, StoredTurn } from "@air/logger-sqlite";
import { trajectoryFacts, turnList, turnView } from "./trajectory.ts";

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

describe("a rollout continued by rl --resume", () => {
  const stored = (metricsJson: string | null): StoredTrajectory => ({
    trajectory: {
      id: 1,
      runId: 1,
      rolloutId: "s1-r0",
      step: 1,
      split: "train",
      exampleId: "e",
      task: "t",
      groupId: "1:e",
      attempt: 0,
      status: "done",
      stopReason: "max_turns",
      error: null,
      reward: 0,
      rewardBreakdownJson: null,
      policyVersionsJson: "[0, 1]",
      priorityMetric: null,
      baselineScore: null,
      finalScore: null,
      improvement: null,
      validationHistoryJson: "[]",
      validated: false,
      turnCount: 3,
      promptTokens: 3,
      completionTokens: 3,
      initialMessagesJson: "[]",
      metricsJson,
      scoreSpecJson: null,
      parentJson: null,
      infoJson: null,
      startedAt: 0,
      endedAt: 1,
    },
    initialMessages: [],
    validationHistory: [],
    turns: [0, 1, 2].map((idx) => ({ ...turn(null), idx })),
  });

  test("is marked in its facts and where it resumed; another is not", async () => {
    const resumed = stored('{"attempts":1,"resume/turn":2}');
    expect(String(await trajectoryFacts(resumed))).toContain("at turn 2 (rl --resume)");
    const turns = String(await turnList(resumed));
    expect(turns.indexOf("resumed here")).toBeGreaterThan(turns.indexOf('data-turn="1"'));
    expect(turns.indexOf("resumed here")).toBeLessThan(turns.indexOf('data-turn="2"'));
    const plain = stored('{"attempts":1}');
    expect(String(await trajectoryFacts(plain))).not.toContain("rl --resume");
    expect(String(await turnList(plain))).not.toContain("resumed here");
  });
});
