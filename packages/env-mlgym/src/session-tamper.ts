import { basename } from "node:path";
import type { StepResult } from "@air/core";
import { type TamperContext, tamperFlags } from "./tamper.ts";

/**
 * `result` with the turn's tamper flags in `info.tamper` (none: unchanged), and the priority score it reports (the
 * next turn's `score-jump` reference). `openFile` is the file the editor has open (an `edit` writes to it).
 */
export function flagTurn(
  tamper: TamperContext,
  turn: { command: string | undefined; result: StepResult; reference: number | undefined; openFile: string },
): { result: StepResult; score: number | undefined } {
  const { command, result } = turn;
  const flags = tamperFlags(tamper, {
    command,
    scores: result.scores,
    reference: turn.reference,
  });
  const score = result.scores
    ? Object.entries(result.scores).find(
        ([k]) => k.toLowerCase() === tamper.priority.metric.toLowerCase(),
      )?.[1]
    : undefined;
  const open = basename(turn.openFile);
  const edits = /^\s*(?:edit|insert|append)\b/.test(command ?? "") && tamper.evaluationFiles.includes(open);
  const creates = /^\s*create\s+(\S+)/.exec(command ?? "");
  if (
    (edits || (creates && tamper.evaluationFiles.includes(basename(creates[1] as string)))) &&
    !flags.includes("writes-evaluation-file")
  )
    flags.push("writes-evaluation-file");
  return {
    result: flags.length > 0 ? { ...result, info: { ...result.info, tamper: flags } } : result,
    score: score !== undefined && Number.isFinite(score) ? score : undefined,
  };
}
