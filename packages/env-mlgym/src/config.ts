import { z } from "zod";

const direction = z.enum(["maximize", "minimize"]);

/** One entry of `[env.docker] hosts`. */
const dockerHost = z
  .object({
    url: z
      .string()
      .regex(/^(unix|tcp|ssh):\/\/./, "expected unix:///path, tcp://host:port or ssh://user@host")
      .describe(
        "Docker Engine API: unix:///var/run/docker.sock, tcp://10.0.0.2:2376 (with tls) or ssh://user@host",
      ),
    name: z.string().optional().describe("short name in logs (default: the URL)"),
    tls: z
      .object({
        ca: z.string().describe("CA certificate (PEM), relative to the TOML file"),
        cert: z.string().describe("client certificate (PEM)"),
        key: z.string().describe("client key (PEM)"),
      })
      .strict()
      .optional()
      .describe("client TLS for tcp:// (as docker --tlsverify --tlscacert --tlscert --tlskey)"),
    sandboxes: z.number().int().positive().describe("sandboxes (containers in use) on this host at once"),
    cpus: z
      .number()
      .positive()
      .optional()
      .describe("CPUs for sandboxes: at most cpus / docker.cpus sandboxes"),
    memory_mb: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("memory for sandboxes: at most memory_mb / docker.memory_mb sandboxes"),
    gpu_ids: z.array(z.string()).default([]).describe("GPU ids on this host, handed to its containers"),
    pool_size: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("warm containers kept on this host (default docker.pool_size)"),
  })
  .strict()
  .refine((h) => h.tls === undefined || h.url.startsWith("tcp://"), {
    message: "tls applies to tcp:// hosts only",
    path: ["tls"],
  });

/**
 * The `[env]` section of the mlgym plugin.
 * @example mlgymConfigSchema.parse({ tasks: ["apartmentRent"], runtime: "local" })
 */
export const mlgymConfigSchema = z
  .object({
    mlgym_root: z
      .string()
      .default(".")
      .describe(
        "MLGym-format root (configs/tasks, configs/datasets, data); relative to the TOML file's directory",
      ),
    aci: z
      .enum(["auto", "air", "mlgym"])
      .default("auto")
      .describe(
        'agent commands: "mlgym" sources the tools and agent config of the MLGym checkout at mlgym_root into the shell (templates, window, linting exactly as MLGym), "air" uses air\'s own implementation; "auto": mlgym when mlgym_root is an MLGym checkout',
      ),
    agent_config: z
      .string()
      .default("configs/agents/default.yaml")
      .describe('with aci "mlgym": the MLGym agent config, relative to mlgym_root'),
    tasks: z.array(z.string().min(1)).min(1).describe("task names (configs/tasks/<name>.yaml) or YAML paths"),
    eval_tasks: z.array(z.string().min(1)).optional().describe("tasks of the eval split (default: tasks)"),
    num_examples_per_task: z.number().int().positive().default(1).describe("examples per task in each split"),
    runtime: z
      .enum(["docker", "local"])
      .default("docker")
      .describe("docker containers, or local bubblewrap sandboxes (`local.isolation`)"),
    max_steps: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("steps shown as 'Remaining Steps' (default: orchestrator.max_turns)"),
    window: z
      .number()
      .int()
      .positive()
      .default(1000)
      .describe("lines the file viewer shows (MLGym's WINDOW; its default agent config says 1000)"),
    max_observation_chars: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "cut longer command output, keeping head and tail (default: never cut, as MLGym; set it to protect the context)",
      ),
    command_timeout_s: z
      .number()
      .positive()
      .optional()
      .describe(
        "timeout of an ordinary command (default: 25 with aci mlgym, MLGym's AGENT_SHORT_ACTION_TIMEOUT; else 60)",
      ),
    training_command: z
      .string()
      .optional()
      .describe(
        "regex: commands matching it get the task's training_timeout (default with aci mlgym: MLGym's rule, the command contains torchrun, python, accelerate or deepspeed anywhere; else a python/torchrun/accelerate/bash/sh invocation)",
      ),
    metric_directions: z
      .record(z.string(), z.record(z.string(), direction))
      .default({})
      .describe("per task id: metric -> maximize|minimize (overrides the YAML and the defaults)"),
    priority_metric: z
      .record(z.string(), z.string())
      .default({})
      .describe("per task id: the metric rewards follow"),
    proxy_call_timeout_s: z
      .number()
      .positive()
      .default(60)
      .describe(
        "Python-submission tasks: seconds one call from the evaluation into the agent's module (run in a separate process) may take; past it the evaluation ends without a score",
      ),
    allow_forgeable: z
      .array(z.string().min(1))
      .default([])
      .describe(
        "tasks (names or ids) to train on although their audit has a critical finding or their evaluation cannot keep the agent's code out of the scorer's process",
      ),
    secret_files: z
      .record(z.string(), z.array(z.string()))
      .default({})
      .describe("per task id: extra evaluation-only files (relative to mlgym_root)"),
    docker: z
      .object({
        image: z.string().default("aigym/mlgym-agent:latest").describe("container image"),
        user: z.string().default("agent").describe("user the agent's commands run as"),
        workspace: z.string().default("/home/agent/workspace").describe("workspace path in the container"),
        python: z.string().default("python").describe("python command inside the container"),
        shell_init: z
          .string()
          .default(
            "[ -f /home/agent/miniconda3/etc/profile.d/conda.sh ] && . /home/agent/miniconda3/etc/profile.d/conda.sh && conda activate mlgym_generic",
          )
          .describe(
            "shell line run first in the agent's shell and before each evaluation (MLGym's conda env)",
          ),
        lock_paths: z
          .array(z.string())
          .default(["/home/agent/miniconda3"])
          .describe(
            "made root-owned and read-only at container start (the Python the root evaluation imports)",
          ),
        memory_mb: z.number().int().positive().default(8192),
        cpus: z.number().positive().default(2),
        pids_limit: z.number().int().positive().default(1024),
        network: z.string().default("none").describe("docker network mode"),
        gpu_ids: z
          .array(z.string())
          .default([])
          .describe("GPU ids for every task container (deployment.env_gpu_ids)"),
        pool_size: z.number().int().min(0).default(8).describe("warm containers kept for reuse"),
        timeout_ms: z.number().int().positive().default(60_000).describe("timeout of container operations"),
        hosts: z
          .array(dockerHost)
          .default([])
          .describe(
            "Docker hosts sandboxes are spread over (empty: the local engine, DOCKER_HOST or /var/run/docker.sock)",
          ),
        require_gpu: z
          .boolean()
          .default(false)
          .describe("with hosts: place sandboxes only on hosts that list gpu_ids"),
        host_probe_ms: z
          .number()
          .int()
          .positive()
          .default(2000)
          .describe(
            "with hosts: every host is pinged this often; one that does not answer is drained until it does",
          ),
      })
      .prefault({}),
    local: z
      .object({
        root: z.string().optional().describe("sandbox directory (default: <run dir>/sandboxes)"),
        python: z.string().default("/usr/bin/python3").describe("interpreter behind the agent's python"),
        isolation: z
          .enum(["bwrap", "none"])
          .default("bwrap")
          .describe(
            'bwrap: each sandbox is a bubblewrap namespace (needs bwrap and user namespaces); "none": plain directories, the agent can read and forge evaluations',
          ),
        max_processes: z
          .number()
          .int()
          .positive()
          .default(1024)
          .describe("processes (and threads) per sandbox"),
        memory_mb: z.number().int().positive().default(8192).describe("data-segment limit per process (MiB)"),
        stage_next: z
          .boolean()
          .default(true)
          .describe("prepare the next sandbox of a task while the current rollout runs (near-free reset)"),
        max_staged: z
          .number()
          .int()
          .min(1)
          .default(8)
          .describe("most sandboxes staged per task (as many as the task has running, up to this)"),
      })
      .prefault({}),
  })
  .strict();

export type MlgymConfig = z.output<typeof mlgymConfigSchema>;
