import type { HostState } from "./docker-hosts-types.ts";
import type { EvaluationOutput, EvaluationRequest, ExecResult, RunRequest, Sandbox } from "./types.ts";

/** A sandbox on one host: its calls fail as soon as the host is drained. */
export class HostedSandbox implements Sandbox {
  readonly id: string;
  readonly workspace: string;

  constructor(
    readonly inner: Sandbox,
    readonly host: HostState,
    readonly drained: AbortSignal,
  ) {
    this.id = inner.id;
    this.workspace = inner.workspace;
  }

  exec(command: string, timeoutMs: number): Promise<ExecResult> {
    return raceDrain(this.inner.exec(command, timeoutMs), this.drained, this.host);
  }

  evaluate(request: EvaluationRequest): Promise<EvaluationOutput> {
    return raceDrain(this.inner.evaluate(request), this.drained, this.host);
  }

  run(request: RunRequest): Promise<ExecResult> {
    if (!this.inner.run) return Promise.reject(new Error("this sandbox cannot run with folders"));
    return raceDrain(this.inner.run(request), this.drained, this.host);
  }

  async writtenBytes(): Promise<number | undefined> {
    return this.inner.writtenBytes
      ? raceDrain(this.inner.writtenBytes(), this.drained, this.host)
      : undefined;
  }

  snapshot(): Promise<Uint8Array> {
    return raceDrain(this.inner.snapshot(), this.drained, this.host);
  }

  async alive(): Promise<boolean> {
    if (this.drained.aborted) return false;
    return await this.inner.alive();
  }
}

/** An error that says the daemon, not the task, failed: no connection, a reset, a 5xx of the Engine API. */
export function hostLevel(error: unknown): boolean {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === "number" && status >= 500) return true;
  return /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|socket hang up|shutting down/i.test(
    String(error),
  );
}

/** `work`, or a rejection as soon as the host is drained. */
export function raceDrain<T>(work: Promise<T>, drained: AbortSignal, host: HostState): Promise<T> {
  if (drained.aborted) {
    work.catch(() => undefined);
    return Promise.reject(drainError(drained, host));
  }
  return new Promise<T>((resolve, reject) => {
    const onDrain = () => reject(drainError(drained, host));
    drained.addEventListener("abort", onDrain, { once: true });
    work.then(
      (value) => {
        drained.removeEventListener("abort", onDrain);
        resolve(value);
      },
      (error: unknown) => {
        drained.removeEventListener("abort", onDrain);
        reject(error);
      },
    );
  });
}

function drainError(drained: AbortSignal, host: HostState): Error {
  return drained.reason instanceof Error
    ? drained.reason
    : new Error(`docker host ${host.spec.name} drained`);
}
