import { scriptedPolicyPlugin } from "./plugin.ts";

export {
  createScriptedPolicy,
  type ScriptedConfig,
  scriptedConfigSchema,
  scriptedPolicyPlugin,
} from "./plugin.ts";
export default scriptedPolicyPlugin;
export { type ScriptedRollout, scriptedRollout } from "./rollout.ts";
