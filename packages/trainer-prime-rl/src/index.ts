export {
  CKPT_COMPLETE_MARKER,
  checkpointComplete,
  checkpointDir,
  checkpointSteps,
  pruneStepDirs,
  resumeCheckpoint,
  stepNumbers,
} from "./checkpoints.ts";
export { modelParameters } from "./ckpt-size.ts";
export { cleanFutureSteps } from "./clean.ts";
export {
  type BatchPart,
  codecFor,
  NEWEST_PRIME_RL,
  PRIME_RL_VERSIONS,
  type PrimeRlCodec,
  type PrimeRlVersion,
} from "./codecs/index.ts";
export {
  orchestratorControlToml,
  type PrimeRlLoss,
  type PrimeRlRunSettings,
  type PrimeRlTrainerSettings,
  primeRlTrainerConfig,
} from "./config.ts";
export { type PrimeRlConfigClass, primeRlFields, tomlKeys, unknownPrimeRlKeys } from "./fields.ts";
export {
  type PrimeRlServerSection,
  type PrimeRlTrainerSection,
  primeRlServerSection,
  primeRlTrainerContext,
  primeRlTrainerSection,
  type VllmServerSection,
  vllmServerSection,
} from "./launch-sections.ts";
export { readStepMetrics, type StepMetricsWait, waitForStepMetrics } from "./metrics.ts";
export {
  decodeMicroBatches,
  encodeMicroBatches,
  MICRO_BATCH_FIELDS,
  type MicroBatchWire,
} from "./micro-batch.ts";
export { type PackOptions, packSamples } from "./pack.ts";
export {
  BATCH_FILE,
  BATCH_TMP_FILE,
  broadcastStepDir,
  primeRlDirs,
  rolloutStepDir,
  STABLE_FILE,
} from "./paths.ts";
export { default, type PrimeRlConfig, primeRlConfigSchema, primeRlPluginPaths } from "./plugin.ts";
export {
  PRIME_RL_PROCESS_ENV,
  type PrimeRlProcessEnv,
  primeRlInferenceDoc,
  primeRlTorchrunArgv,
  vllmTrainingArgs,
} from "./prime-rl-argv.ts";
export { PRIME_RL_PROCESSES, primeRlTrainerSpec } from "./processes.ts";
export { lastStableStep } from "./restart.ts";
export { resumeWeightsDir } from "./resume-weights.ts";
export { primeRlInferenceToml, vllmServeArgv } from "./servers.ts";
export { lastPrimeStepUpTo, primeStepOf, readStepMap, STEP_MAP_FILE } from "./steps.ts";
export { trainerCheckpointInterval } from "./trainer-keys.ts";
export { primeRlPaths, primeRlSettings, primeRlTrainerToml } from "./trainer-toml.ts";
export { waitForFile } from "./watch.ts";
export {
  encodeTrainingBatch,
  TRAINING_SAMPLE_FIELDS,
  type TrainingBatchWire,
  type TrainingSampleWire,
  toTrainingSample,
} from "./wire.ts";
export { rankTopic, type ZmqEndpoint, ZmqMicroBatchSender } from "./zmq/sender.ts";
