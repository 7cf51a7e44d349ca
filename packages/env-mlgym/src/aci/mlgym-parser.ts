import type { Action } from "@air/core";

/** The output parsers of MLGym's agent configs (`output_parser`) air reads replies with as MLGym does. */
export const MLGYM_PARSERS = ["MLGymThoughtActionParser", "ThoughtActionParser"] as const;
export type MlgymParserName = (typeof MLGYM_PARSERS)[number];

/**
 * A reply read as MLGym's `ThoughtActionParser` / `MLGymThoughtActionParser` read it: the action is the last
 * top-level fenced block (an opening fence may name a language, a closing one is bare; nested blocks stay
 * inside), the thought is the rest; `MLGymThoughtActionParser` also rejects a reply with more than one
 * ```…``` pair. A reply without an action yields `parseError` with MLGym's message; the action is passed on
 * unstripped, as MLGym passes it to its environment.
 * @example parseMlgymReply("DISCUSSION\nlook\n```\nls\n```", "MLGymThoughtActionParser").command // "ls\n"
 */
export function parseMlgymReply(text: string, parser: MlgymParserName): Action {
  if (parser === "MLGymThoughtActionParser" && [...text.matchAll(/```([\s\S]*?)```/g)].length > 1) {
    return { text, parseError: "Found more than one code block in the model response." };
  }
  const fence = /^```(\S*)\s*\n|^```\s*$/gm;
  const stack: RegExpExecArray[] = [];
  let last: [RegExpExecArray, RegExpExecArray] | undefined;
  for (let m = fence.exec(text); m !== null; m = fence.exec(text)) {
    const language = m[1];
    if (stack.length > 0 && !language) {
      const start = stack.pop() as RegExpExecArray;
      if (stack.length === 0) last = [start, m];
    } else if (language !== undefined) stack.push(m);
  }
  if (!last) return { text, parseError: "No action found in model response." };
  const [start, end] = last;
  return { text, command: text.slice(start.index + start[0].length, end.index) };
}
