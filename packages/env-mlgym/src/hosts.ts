import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { CheckResult } from "@air/core";
import { type DockerHostSpec, dockerClientFor, pingDocker } from "@air/sandbox";
import type { MlgymConfig } from "./config.ts";

/**
 * The hosts of `[env.docker] hosts` with TLS paths made absolute (relative to the TOML file's directory).
 * @example hostSpecs(config, "/repo/configs/mlgym")[0] // { name: "tcp://10.0.0.2:2376", sandboxes: 16, ... }
 */
export function hostSpecs(config: MlgymConfig, configDir: string): DockerHostSpec[] {
  return config.docker.hosts.map((h) => ({
    url: h.url,
    name: h.name ?? h.url,
    ...(h.tls
      ? {
          tls: {
            ca: resolve(configDir, h.tls.ca),
            cert: resolve(configDir, h.tls.cert),
            key: resolve(configDir, h.tls.key),
          },
        }
      : {}),
    sandboxes: h.sandboxes,
    ...(h.cpus === undefined ? {} : { cpus: h.cpus }),
    ...(h.memory_mb === undefined ? {} : { memoryMb: h.memory_mb }),
    gpuIds: h.gpu_ids,
    poolSize: h.pool_size ?? config.docker.pool_size,
  }));
}

/**
 * `rl check` for `[env.docker] hosts`: per host, its TLS files exist, it answers, and it has the image
 * (images are never pulled; the message says which host lacks what and how to copy it there).
 * @example await checkDockerHosts(config, configDir) // [{ name: "docker host tcp://…", status: "fail", message: "lacks image …" }]
 */
export async function checkDockerHosts(config: MlgymConfig, configDir: string): Promise<CheckResult[]> {
  if (config.runtime !== "docker") return [];
  const image = config.docker.image;
  return await Promise.all(
    hostSpecs(config, configDir).map(async (spec): Promise<CheckResult> => {
      const name = `docker host ${spec.name}`;
      const missing = spec.tls ? Object.values(spec.tls).filter((f) => !existsSync(f)) : [];
      if (missing.length > 0)
        return { name, status: "fail", message: `TLS file(s) not found: ${missing.join(", ")}` };
      try {
        const docker = dockerClientFor(spec);
        await pingDocker(docker, 5000);
        try {
          await docker.getImage(image).inspect();
        } catch {
          return {
            name,
            status: "fail",
            message: `answers, but lacks image ${image} (images are never pulled; from a machine that has it: docker save ${image} | docker -H ${spec.url} load)`,
          };
        }
        return { name, status: "ok", message: `answers, has ${image}; ${spec.sandboxes} sandbox(es)` };
      } catch (error) {
        return {
          name,
          status: "fail",
          message: `does not answer: ${error instanceof Error ? error.message : error}`,
        };
      }
    }),
  );
}
