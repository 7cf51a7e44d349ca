import { describe, expect, test } from "bun:test";
import { formatIssues } from "@air/core";
import { inferenceSection, trainerProcessSection } from "./sections.ts";

/** The messages `rl validate` prints for a section, as core formats them (the user's TOML paths). */
function problems(section: "inference" | "trainer_process", value: unknown): string[] {
  const schema = section === "inference" ? inferenceSection : trainerProcessSection;
  const parsed = schema.safeParse(value);
  return parsed.success ? [] : formatIssues(parsed.error, [section], "run.toml");
}

describe("process sections are built from the kinds the launcher knows", () => {
  test("kind names a known kind; the kind's own keys are checked by its schema at the user's path", () => {
    expect(problems("inference", { kind: "sglang" })[0]).toStartWith("inference.kind: Invalid option");
    expect(problems("inference", { kind: "prime-rl", router: 1 })).toEqual([
      "inference.router: Invalid input: expected boolean, received number (run.toml)",
    ]);
    expect(problems("inference", { kind: "vllm", lora: { enabled: "yes" } })).toEqual([
      "inference.lora.enabled: Invalid input: expected boolean, received string (run.toml)",
    ]);
    expect(problems("trainer_process", { kind: "prime-rl", lr: -1 })[0]).toStartWith("trainer_process.lr:");
  });

  test("a key of another kind says whose it is; a key no kind knows is unknown", () => {
    expect(problems("inference", { kind: "vllm", router: true })).toEqual([
      'inference.router: kind = "vllm" takes no router (a key of kind "prime-rl") (run.toml)',
    ]);
    expect(problems("trainer_process", { kind: "prime-rl", lrr: 1 })).toEqual([
      "trainer_process.lrr: unknown key (check the spelling) (run.toml)",
    ]);
  });

  test("none / external start nothing: other kinds' keys are inert, unknown ones are still refused", () => {
    expect(problems("trainer_process", { kind: "none", lr: 0.1, config_file: "x.toml" })).toEqual([]);
    expect(problems("inference", { url: "http://h:1", gpu_memory_utilization: 0.5 })).toEqual([]);
    expect(problems("inference", { url: "http://h:1", gpu_memory: 0.5 })).toEqual([
      "inference.gpu_memory: unknown key (check the spelling) (run.toml)",
    ]);
  });

  test("the launcher's own keys stay generic and validated; seq_len is no [trainer_process] key", () => {
    expect(problems("trainer_process", { kind: "prime-rl", nnodes: 2, node_rank: 2 })).toEqual([
      "trainer_process.node_rank: node_rank must be < nnodes (run.toml)",
    ]);
    expect(problems("trainer_process", { kind: "prime-rl", seq_len: 4096 })[0]).toContain(
      "trainer_process.seq_len: set [trainer] seq_len instead",
    );
    const parsed = trainerProcessSection.parse({ kind: "prime-rl" });
    // the launcher's defaults and the kind's (what `rl validate` prints)
    expect(parsed).toMatchObject({
      kind: "prime-rl",
      nnodes: 1,
      max_restarts: 0,
      lr: 1e-5,
      ckpt_interval: 0,
    });
  });
});
