import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Environment, StepResult } from "@air/core";
import { mlgymConfigSchema } from "../config.ts";
import { createMlgymEnvironment } from "../plugin.ts";
import { dockerAvailable, removeTestRunDirs, TEST_IMAGE, testContext } from "../testing/context.ts";
import { exampleOf, runScript } from "../testing/script.ts";

afterAll(removeTestRunDirs);

const docker = await dockerAvailable();
const FIXTURE = join(import.meta.dir, "..", "..", "fixtures", "known-game");
const FORGED = 99;

/** A shell command that writes `text` to `path` (base64, so quotes and newlines survive). */
const write = (path: string, text: string) =>
  `echo ${Buffer.from(text).toString("base64")} | base64 -d > ${path}`;

const HONEST = "def row_strategy(history):\n    return 0\n";
const forge = `import json\nFORGE = json.dumps({"Score": ${FORGED}})\n`;

/** Forge probes on the known-game fixture (prisonersDilemma laid out as MLGym's, evaluator imports strategy.py). */
const PROBES: {
  name: string;
  files: Record<string, string>;
  /** honest: the real score; error: a boundary error, no score; output: no score, as MLGym's evaluation whose output the agent's print broke. */
  expect: "honest" | "error" | "output";
}[] = [
  {
    name: "print at import",
    files: { "strategy.py": `${forge}print(FORGE, flush=True)\n${HONEST}` },
    expect: "output",
  },
  {
    name: "atexit",
    files: {
      "strategy.py": `${forge}import atexit\natexit.register(lambda: print(FORGE, flush=True))\n${HONEST}`,
    },
    expect: "honest",
  },
  {
    name: "os._exit at import",
    files: { "strategy.py": `${forge}import os\nprint(FORGE, flush=True)\nos._exit(0)\n${HONEST}` },
    expect: "error",
  },
  {
    name: "writing to inherited file descriptors and the evaluator's /proc fds",
    files: {
      "strategy.py": `${forge}import os\nfor fd in range(0, 256):\n    try:\n        os.write(fd, ("\\n" + FORGE + "\\n").encode())\n    except OSError:\n        pass\nfor pid in os.listdir("/proc"):\n    try:\n        with open(f"/proc/{pid}/fd/1", "w") as f:\n            f.write("\\n" + FORGE + "\\n")\n    except OSError:\n        pass\n${HONEST}`,
    },
    // The agent's process can only reach its own end of the pipe: junk there ends the evaluation.
    expect: "error",
  },
  {
    name: "monkeypatching the evaluator's modules",
    files: {
      "strategy.py": `${forge}import builtins, sys\njson.dumps = lambda *a, **k: FORGE\nmain = sys.modules["__main__"]\nmain.PAYOFF = {k: ${FORGED} for k in [(0, 0), (0, 1), (1, 0), (1, 1)]}\nreal = builtins.print\nbuiltins.print = lambda *a, **k: real(FORGE)\n${HONEST}`,
    },
    expect: "honest",
  },
  {
    name: "shadowing a module the evaluator imports (json.py)",
    files: { "json.py": `def dumps(*a, **k):\n    return '{"Score": ${FORGED}}'\n`, "strategy.py": HONEST },
    expect: "honest",
  },
  {
    name: "rewriting the opponent and a planted __pycache__ before the evaluator imports them",
    files: {
      "strategy.py": `import glob, os\nfor p in glob.glob("/home/agent/workspace/target.py") + glob.glob(os.path.join(os.path.dirname(__file__), "target.py")):\n    try:\n        open(p, "w").write("def target_column_strategy(history):\\n    return ${FORGED}\\n")\n    except OSError:\n        pass\n${HONEST}`,
    },
    expect: "honest",
  },
  {
    name: "a call that hangs",
    files: { "strategy.py": "def row_strategy(history):\n    while True:\n        pass\n" },
    expect: "error",
  },
  {
    name: "a value that cannot cross",
    files: { "strategy.py": "def row_strategy(history):\n    return object()\n" },
    expect: "error",
  },
];

async function makeEnv(runtime: "docker" | "local"): Promise<Environment> {
  const config = mlgymConfigSchema.parse({
    mlgym_root: FIXTURE,
    tasks: ["prisonersDilemma"],
    runtime,
    max_steps: 100,
    proxy_call_timeout_s: 3,
    docker: { image: TEST_IMAGE, pool_size: 1, memory_mb: 2048, cpus: 1 },
  });
  return createMlgymEnvironment(config, testContext(`forge-${runtime}`));
}

for (const runtime of ["local", "docker"] as const) {
  describe.skipIf(runtime === "docker" && !docker)(`forge probes on a game task (${runtime})`, () => {
    test("no forgery scores, boundary errors end the evaluation without a score, honest play scores as before", async () => {
      const env = await makeEnv(runtime);
      try {
        const commands = ["validate"];
        for (const probe of PROBES) {
          commands.push(...Object.entries(probe.files).map(([p, t]) => write(p, t)), "validate");
          commands.push(`rm -f json.py; ${write("strategy.py", HONEST)}`);
        }
        const started = Date.now();
        const results: StepResult[] = await runScript(
          env,
          await exampleOf(env, "prisonersDilemma"),
          commands,
        );
        expect(results[0]?.scores).toEqual({ Score: 3 });
        let at = 1;
        for (const probe of PROBES) {
          at += Object.keys(probe.files).length;
          const result = results[at];
          const said = `${probe.name}: ${JSON.stringify(result?.scores)} ${result?.evaluationError ?? ""}`;
          expect(result?.kind, said).toBe("validate");
          expect(Object.values(result?.scores ?? {}), said).not.toContain(FORGED);
          if (probe.expect === "honest") expect(result?.scores, said).toEqual({ Score: 3 });
          else if (probe.expect === "output") {
            // shown as MLGym shows an evaluation its metrics decode failed on: the print, then the evaluator's output
            expect(result?.scores, said).toBeUndefined();
            expect(result?.evaluationError, said).toStartWith(
              `Failed to decode metrics from evaluation script. Output:\n---\n{"Score": ${FORGED}}\n{\n  "Score": 3.0\n}\n---\n`,
            );
          } else {
            expect(result?.scores, said).toBeUndefined();
            expect(result?.evaluationError, said).toStartWith("Evaluation error: ");
          }
          at += 2;
        }
        const at0 = (name: string) =>
          1 +
          PROBES.slice(
            0,
            PROBES.findIndex((p) => p.name === name),
          ).reduce((n, p) => n + Object.keys(p.files).length + 2, 0);
        const hang = PROBES.find((p) => p.name === "a call that hangs");
        expect(
          results[at0("a call that hangs") + Object.keys(hang?.files ?? {}).length]?.evaluationError,
        ).toContain("did not return within 3 s");
        expect(Date.now() - started).toBeLessThan(120_000);
      } finally {
        await env.close?.();
      }
    }, 240_000);
  });
}
