/** What the verifier's reward files say: scores per key, or why there is none. */
export type RewardReading = { ok: true; scores: Record<string, number> } | { ok: false; error: string };

/**
 * Reads `/logs/verifier/reward.json` and `reward.txt` as Harbor's verifier does: reward.json (an object; its
 * numeric, non-boolean values are the scores, one per key) wins, with reward.txt's number added as `reward`
 * when the JSON has no `reward` key; else reward.txt alone is `{ reward }`. An empty or unparsable file, or
 * neither file, is an error (no score, so reward 0).
 * @example readRewardFiles({ text: "1\n" }) // { ok: true, scores: { reward: 1 } }
 */
export function readRewardFiles(files: { text?: string; json?: string }): RewardReading {
  const fromText = (): RewardReading => {
    const text = (files.text ?? "").trim();
    if (text === "") return { ok: false, error: "reward.txt is empty" };
    const value = Number(text);
    if (!Number.isFinite(value))
      return { ok: false, error: `reward.txt is not a number: ${JSON.stringify(text.slice(0, 80))}` };
    return { ok: true, scores: { reward: value } };
  };
  if (files.json !== undefined) {
    if (files.json.trim() === "") return { ok: false, error: "reward.json is empty" };
    let parsed: unknown;
    try {
      parsed = JSON.parse(files.json);
    } catch {
      return { ok: false, error: `reward.json is not JSON: ${JSON.stringify(files.json.slice(0, 80))}` };
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      return { ok: false, error: "reward.json must be an object of numbers" };
    const scores: Record<string, number> = {};
    for (const [key, value] of Object.entries(parsed))
      if (typeof value === "number" && Number.isFinite(value)) scores[key] = value;
    if (!("reward" in scores) && files.text !== undefined) {
      const text = fromText();
      if (text.ok) Object.assign(scores, text.scores);
    }
    if (Object.keys(scores).length === 0) return { ok: false, error: "reward.json has no numeric value" };
    return { ok: true, scores };
  }
  if (files.text !== undefined) return fromText();
  return { ok: false, error: "test.sh wrote neither /logs/verifier/reward.txt nor reward.json" };
}
