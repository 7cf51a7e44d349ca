import type { PluginContext } from "@air/core";
import { DockerHostsRuntime } from "@air/sandbox";
import { ACI_GUARDS } from "./aci/guards.ts";
import type { MlgymConfig } from "./config.ts";
import { hostSpecs } from "./hosts.ts";

type OnState = (state: {
  id: string;
  rolloutId?: string;
  state: string;
  command?: string;
  host?: string;
}) => void;

/**
 * What every container of the run gets from `[env.docker]`, on one host or many: image, user, limits, network,
 * the run's label (`ctx.runDir`), the command timeout.
 * @example new DockerRuntime({ ...containerOptions(config, ctx), poolSize: 2, onState })
 */
export function containerOptions(config: MlgymConfig, ctx: PluginContext) {
  const d = config.docker;
  return {
    image: d.image,
    user: d.user,
    workspace: d.workspace,
    agentInit: ACI_GUARDS,
    shellInit: d.shell_init || undefined,
    lockPaths: d.lock_paths,
    memoryMb: d.memory_mb,
    cpus: d.cpus,
    pidsLimit: d.pids_limit,
    network: d.network,
    runName: ctx.runDir,
    timeoutMs: d.timeout_ms,
  };
}

/**
 * The docker runtime over `[env.docker] hosts`: one `DockerRuntime` per host behind `DockerHostsRuntime`
 * (placement, draining, readmission), every container with the run's labels; `sandbox:state` events carry the
 * host's name. GPU ids come from each host's
 * `gpu_ids` (the launcher's `env_gpu_ids` name GPUs of this machine only).
 * @example const runtime = hostsRuntime(config, ctx, (s) => ctx.emit("sandbox:state", s));
 */
export function hostsRuntime(config: MlgymConfig, ctx: PluginContext, onState: OnState): DockerHostsRuntime {
  const d = config.docker;
  const runtime = new DockerHostsRuntime(hostSpecs(config, ctx.configDir), {
    base: containerOptions(config, ctx),
    onSandbox: onState,
    requireGpu: d.require_gpu,
    probeMs: d.host_probe_ms,
    log: (level, message) => ctx.log[level](`mlgym: ${message}`),
  });
  const summary = runtime.hosts.map((h) => `${h.spec.name} (${h.slots} sandboxes)`).join(", ");
  ctx.log.info(`mlgym: docker hosts ${summary}`);
  return runtime;
}
