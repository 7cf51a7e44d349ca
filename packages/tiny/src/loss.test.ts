import { expect, test } from "bun:test";
import { join } from "node:path";
import { tinyConfigSchema } from "./config.ts";
import { TINY_PYTHON } from "./scripts.ts";

const PY_DIR = join(import.meta.dir, "..", "py");

async function python(args: string[]): Promise<string> {
  const proc = Bun.spawn([TINY_PYTHON, ...args], { stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill(), 60_000);
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  clearTimeout(timer);
  return (out + err).trim();
}

test("the trainer's loss is prime-rl's default loss (DPPO masking, KL term, rl_weights, temperature)", async () => {
  expect(await python([join(import.meta.dir, "fixtures", "check_loss.py"), PY_DIR])).toBe("ok");
}, 60_000);

test("the kit's defaults equal the Python defaults (model config.json and prime-rl's default loss)", async () => {
  const code = `import json, sys; sys.path.insert(0, ${JSON.stringify(PY_DIR)}); from air_tiny import model, loss; print(json.dumps({**model.MODEL_DEFAULTS, **loss.LOSS_DEFAULTS}))`;
  const py = JSON.parse(await python(["-c", code]));
  const kit = tinyConfigSchema.parse({ commands: ["x"] });
  const { max_position_embeddings, ...rest } = py;
  expect(kit.max_model_len).toBe(max_position_embeddings);
  const kitValues: Record<string, unknown> = kit;
  for (const [key, value] of Object.entries(rest as Record<string, unknown>))
    expect({ key, value: kitValues[key] }).toEqual({ key, value });
}, 60_000);
