/** MLGym's TRAIN_COMMANDS rule: any of them anywhere in the command gets the task's training timeout. */
export const MLGYM_TRAINING_COMMAND = "torchrun|python|accelerate|deepspeed";
/** air's own ACI: a python/torchrun/accelerate or bash/sh invocation at the start of a command. */
export const AIR_TRAINING_COMMAND =
  "(^|[;&|(]\\s*)(python3?|torchrun|accelerate)\\s+\\S|^\\s*(bash|sh)\\s+\\S";

/**
 * The timeout of an ordinary command and which commands get the task's training timeout: the config's, else
 * MLGym's with its own tools (25 s, "contains python"), else air's (60 s, a python/bash invocation).
 * @example commandTimeouts({}, true).commandTimeoutS // 25
 */
export function commandTimeouts(
  config: { command_timeout_s?: number; training_command?: string },
  mlgymTools: boolean,
): { commandTimeoutS: number; trainingCommand: RegExp } {
  return {
    commandTimeoutS: config.command_timeout_s ?? (mlgymTools ? 25 : 60),
    trainingCommand: new RegExp(
      config.training_command ?? (mlgymTools ? MLGYM_TRAINING_COMMAND : AIR_TRAINING_COMMAND),
    ),
  };
}
