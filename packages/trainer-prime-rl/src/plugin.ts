import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AirError, definePlugin } from "@air/core";
import { pruneStepDirs } from "./checkpoints.ts";
import { codecFor } from "./codecs/index.ts";
import { orchestratorControlToml } from "./config.ts";
import { derive, seqLen } from "./derive.ts";
import { exportFinalWeights } from "./final-weights.ts";
import { waitForStepMetrics } from "./metrics.ts";
import { primeRlConfigSchema } from "./options.ts";
import { broadcastStepDir, primeRlPluginPaths, rolloutStepDir, STABLE_FILE } from "./paths.ts";
import { PRIME_RL_PROCESSES } from "./processes.ts";
import { restartProblems, restartStep } from "./restart.ts";
import { finishedWeightsDir, pruneSetAside, resumeWeights, setAsideForRestart } from "./resume-weights.ts";
import { prepareRunDir } from "./run-dir.ts";
import { readStepMap, writeStepMap } from "./steps.ts";
import { waitFor } from "./watch.ts";
import { toTrainingSample } from "./wire.ts";
import { ZmqMicroBatchSender } from "./zmq/sender.ts";

export { type PrimeRlConfig, primeRlConfigSchema } from "./options.ts";
export { primeRlPluginPaths } from "./paths.ts";

/**
 * Trainer plugin "prime-rl": hands batches to prime-rl's trainer (or the tiny CPU trainer) in the format of
 * `prime_rl_version` — 0.8: one `TrainingBatch` file per step; 0.9: `MicroBatch` lists packed per data rank,
 * as files or over ZMQ — and waits for the broadcast weights (`broadcasts/step_N/STABLE`).
 * @example
 * // [trainer]
 * // plugin = "prime-rl"
 * // prime_rl_version = "0.9"
 * // env_name = "mlgym"
 */
export default definePlugin({
  name: "prime-rl",
  kind: "trainer",
  description:
    "prime-rl trainer transport (0.8 TrainingBatch files; 0.9 MicroBatch files or ZMQ), STABLE weights back",
  configSchema: primeRlConfigSchema,
  // What the launcher does for this trainer: its run dir before it starts, the weights a resumed run starts from,
  // the step a restarted trainer resumes from (and when it cannot), the final weights, what follows from its ranks,
  // and the processes it starts: prime-rl's trainer and inference server (or stock vLLM), argv, env and files.
  launch: {
    processes: PRIME_RL_PROCESSES,
    processSettings: (config) => config,
    derive,
    prepareRunDir,
    resumeWeights,
    restartStep,
    beforeRestart: setAsideForRestart,
    restartProblems,
    finalWeights: exportFinalWeights,
  },
  create: (config, ctx) => {
    const codec = codecFor(config.prime_rl_version);
    const { runDir, outputDir, metricsFile } = primeRlPluginPaths(config, ctx.runDir, ctx.configDir);
    const kind = config.lora ? "lora" : "full";
    // The packing bin size is the trainer's [model] seq_len: one value (`seqLen`), which the trainer TOML gets too.
    const binSize = seqLen(config, ctx.maxModelLen).value;
    mkdirSync(runDir, { recursive: true });
    if (codec.needsControlFile && config.write_control) {
      const control = join(runDir, "control");
      mkdirSync(control, { recursive: true });
      const lora = config.lora ? { rank: config.lora_rank, alpha: config.lora_alpha } : null;
      // Whole before it is visible: the trainer polls for this file and parses it once it exists.
      const file = join(control, "orch.toml");
      writeFileSync(`${file}.tmp`, orchestratorControlToml({ model: ctx.modelName, runDir, lora }));
      renameSync(`${file}.tmp`, file);
    }
    ctx.log.debug(`prime-rl ${codec.version} (${codec.tag}), run dir ${runDir}, metrics ${metricsFile}`);
    // prime-rl steps are consecutive batches: an empty air step sends nothing and takes no number. The map is
    // persisted so a resumed run continues the numbering where the trainer's receiver is.
    const stepMap = readStepMap(runDir);
    let nextPrimeStep: number | undefined;
    let sender: ZmqMicroBatchSender | undefined;
    const zmqHost = config.zmq_host ?? "localhost";
    const dataWorldSize = config.data_world_size ?? 1;
    const endpoint = `tcp://${zmqHost}:${config.zmq_port}`;
    const controlFailure = () => {
      for (const name of ["evicted.txt", "config_validation_error.txt"]) {
        const file = join(runDir, "control", name);
        if (existsSync(file)) {
          const reason = readFileSync(file, "utf8").trim();
          throw new AirError("TRAINER_FAILED", `the trainer rejected this run (${file}): ${reason}`);
        }
      }
    };
    const firstStep = (airStep: number) => {
      // Forget steps at or after the resume point (they are being redone); continue after the last sent one.
      let last: number | undefined;
      for (const [k, v] of Object.entries(stepMap)) {
        if (Number(k) >= airStep) delete stepMap[k];
        else if (v !== null) last = Math.max(last ?? 0, v);
      }
      return last === undefined ? airStep + config.step_offset : last + 1;
    };

    return {
      submit: async (batch) => {
        nextPrimeStep ??= firstStep(batch.step);
        if (batch.samples.length === 0) {
          stepMap[String(batch.step)] = null;
          writeStepMap(runDir, stepMap);
          ctx.log.warn(`step ${batch.step}: empty batch not sent (prime-rl's trainer cannot train on one)`);
          return;
        }
        for (const s of batch.samples) {
          const n = s.tokenIds.length;
          if (n === 0 || (config.max_sample_tokens !== undefined && n > config.max_sample_tokens)) {
            throw new AirError(
              "TRAINER_FAILED",
              `sample ${s.trajectoryId} has ${n} tokens (allowed: 1..${config.max_sample_tokens ?? "∞"}); prime-rl would evict the run or truncate it`,
            );
          }
        }
        const step = nextPrimeStep;
        if (existsSync(join(broadcastStepDir(runDir, step), STABLE_FILE))) {
          throw new AirError(
            "TRAINER_FAILED",
            `${broadcastStepDir(runDir, step)} already has STABLE before its batch was written: a stale run dir? (clean it, or resume)`,
          );
        }
        const cut = batch.samples.filter((s) => s.tokenIds.length > binSize).length;
        if (codec.version !== "0.8" && cut > 0)
          ctx.log.warn(
            `step ${batch.step}: ${cut} sample(s) longer than seq_len ${binSize} are truncated, as prime-rl packs them (tokens past ${binSize} are not trained)`,
          );
        const parts = codec.encodeStep(
          batch.samples.map((s) => toTrainingSample(s, config.env_name)),
          step,
          { seqLen: binSize, dataWorldSize, padToMultipleOf: config.pad_to_multiple_of ?? 1 },
        );
        if (config.transport === "zmq") {
          sender ??= await ZmqMicroBatchSender.bind({ host: zmqHost, port: config.zmq_port });
          await sender.waitReady(dataWorldSize, config.zmq_ready_timeout_ms, ctx.signal, config.cp ?? 1);
          sender.send(parts.map((p) => p.bytes));
        } else {
          const dir = rolloutStepDir(runDir, step);
          mkdirSync(dir, { recursive: true });
          // Write + rename: the trainer never sees a half-written file. Highest rank first, so once rank_0.bin is
          // there every rank's file is (the one-process tiny trainer reads them all when rank_0 appears).
          for (const p of [...parts].reverse()) {
            writeFileSync(join(dir, `${p.file}.tmp`), p.bytes);
            renameSync(join(dir, `${p.file}.tmp`), join(dir, p.file));
          }
        }
        stepMap[String(batch.step)] = step;
        writeStepMap(runDir, stepMap);
        nextPrimeStep = step + 1;
        const bytes = parts.reduce((n, p) => n + p.bytes.length, 0);
        ctx.log.debug(
          `sent step ${step}: ${batch.samples.length} samples, ${parts.length} part(s), ${bytes} bytes`,
        );
      },
      waitForWeights: async (step, signal) => {
        const mapped = stepMap[String(step)];
        if (mapped === null) return null;
        const n = mapped ?? step + config.step_offset;
        const dir = broadcastStepDir(runDir, n);
        const sent =
          config.transport === "zmq"
            ? `sent over ${endpoint}`
            : `written to ${rolloutStepDir(runDir, n)}/${codec.version === "0.8" ? "train_rollouts.bin" : "rank_*.bin"}`;
        // The set-aside copy when a restart moved it there (a restarted trainer rewrites broadcasts in place).
        const path = await waitFor(() => finishedWeightsDir(runDir, n), {
          pollMs: config.poll_ms,
          timeoutMs: config.weights_timeout_ms,
          signal,
          what: `weights of step ${n} (${dir}/STABLE; its batch was ${sent})`,
          check: controlFailure,
        });
        const { metrics, missing } = await waitForStepMetrics(metricsFile, n, {
          waitMs: config.metrics_wait_ms,
          pollMs: config.poll_ms,
          signal,
          nextStepStarted: () => finishedWeightsDir(runDir, n + 1) !== undefined,
        });
        if (missing)
          ctx.log.warn(`step ${step}: no trainer loss in its step line: ${missing} (${metricsFile})`);
        else if (!metrics) ctx.log.debug(`no metrics for step ${n} in ${metricsFile}`);
        if (config.prune) {
          const removed = pruneStepDirs({
            runDir,
            outputDir,
            newest: n,
            keepBroadcasts: config.keep_broadcasts,
          });
          removed.push(...pruneSetAside(runDir, n));
          if (removed.length > 0)
            ctx.log.debug(`removed ${removed.length} old step dir(s): ${removed.join(", ")}`);
        }
        // After the metrics wait: a restart during it may have set this step's weights aside since.
        const finished = finishedWeightsDir(runDir, n) ?? path;
        return { version: step + 1, path: finished, kind, metrics: metrics ?? {} };
      },
      close: () => {
        sender?.close();
      },
    };
  },
});
