import type Docker from "dockerode";
import { dockerClient, dockerReachable } from "../docker-client.ts";

/**
 * The engine and the test image (`AIR_TEST_IMAGE`, default `air-mlgym-test:latest`) for tests that need them, and
 * why such tests are skipped here (no engine answers, or the image is missing), or undefined.
 * @example const { docker, image, skip } = await testDockerImage(); describe.skipIf(skip !== undefined)("…", …);
 */
export async function testDockerImage(): Promise<{ docker: Docker; image: string; skip?: string }> {
  const image = process.env.AIR_TEST_IMAGE ?? "air-mlgym-test:latest";
  const docker = dockerClient();
  if (!(await dockerReachable(docker))) return { docker, image, skip: "no docker engine answers" };
  const there = await docker
    .getImage(image)
    .inspect()
    .then(
      () => true,
      () => false,
    );
  return there ? { docker, image } : { docker, image, skip: `image ${image} missing` };
}
