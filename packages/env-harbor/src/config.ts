import { z } from "zod";

/**
 * The `[env]` section of the harbor plugin.
 * @example harborConfigSchema.parse({ dataset: "../data/harbor", tasks: ["hello-file"], runtime: "local" })
 */
export const harborConfigSchema = z
  .object({
    dataset: z
      .string()
      .min(1)
      .describe(
        "folder of Harbor task folders (each: task.toml, instruction.md, environment/, tests/), relative to the TOML file",
      ),
    tasks: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe("task folder names to train on (default: every task folder of the dataset)"),
    eval_tasks: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe("tasks of the eval split (default: tasks)"),
    skip_invalid_tasks: z
      .boolean()
      .default(false)
      .describe(
        "run without task folders that cannot be read or built (each still reported); default: such a task stops the run",
      ),
    num_examples_per_task: z.number().int().positive().default(1).describe("examples per task in each split"),
    runtime: z
      .enum(["docker", "local"])
      .default("docker")
      .describe(
        'docker: the task\'s image (built from environment/Dockerfile); "local": bubblewrap, for tasks that need no build',
      ),
    oracle: z
      .boolean()
      .default(false)
      .describe(
        "Harbor's oracle agent: each episode first runs solution/solve.sh in the sandbox (the baseline to reproduce)",
      ),
    metric: z
      .string()
      .default("reward")
      .describe(
        "the verifier's key rewards follow (reward.txt is `reward`; reward.json may have several keys)",
      ),
    command_timeout_sec: z
      .number()
      .positive()
      .default(600)
      .describe("most seconds one command may run (also capped by the task's [agent] timeout_sec left)"),
    max_observation_chars: z
      .number()
      .int()
      .positive()
      .default(10_000)
      .describe("longer command output is cut"),
    allow_internet: z
      .boolean()
      .default(true)
      .describe("false: no network for any task, whatever its allow_internet says; true: as the task says"),
    base_images: z
      .record(z.string(), z.string())
      .default({})
      .describe(
        'FROM images replaced before building, e.g. { "python:3.12-slim" = "air-mlgym-test:latest" }',
      ),
    docker: z
      .object({
        pids_limit: z.number().int().positive().default(1024),
        hosts: z
          .array(
            z
              .object({
                url: z
                  .string()
                  .regex(
                    /^(unix|tcp|ssh):\/\/./,
                    "expected unix:///path, tcp://host:port or ssh://user@host",
                  ),
                name: z.string().optional().describe("short name in logs (default: the URL)"),
                tls: z
                  .object({ ca: z.string(), cert: z.string(), key: z.string() })
                  .strict()
                  .optional()
                  .describe("client TLS files (PEM) for tcp://, relative to the TOML file"),
                sandboxes: z.number().int().positive().describe("rollouts on this host at once"),
              })
              .strict(),
          )
          .default([])
          .describe(
            "Docker hosts rollouts are spread over (each task's image is built on every one); empty: the local engine",
          ),
        storage_check: z
          .boolean()
          .default(true)
          .describe(
            "after each command, end the episode when the container wrote more than the task's storage_mb",
          ),
      })
      .strict()
      .prefault({}),
    local: z
      .object({
        root: z.string().optional().describe("where sandboxes live (default: <run dir>/harbor-sandboxes)"),
        python: z
          .string()
          .default("/usr/bin/python3")
          .describe("interpreter behind python/python3 in the sandbox"),
        max_processes: z.number().int().positive().default(1024),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type HarborConfig = z.output<typeof harborConfigSchema>;
