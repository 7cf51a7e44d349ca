export { noneTrainerConfig } from "./options.ts";
export { default } from "./plugin.ts";
