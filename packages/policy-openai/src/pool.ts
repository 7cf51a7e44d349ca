import { errorMessage, type Logger, sleep } from "@air/core";
import { HttpStatusError, isTransient, statusOf } from "./retry.ts";
import type { InferenceServer } from "./server.ts";

/** One inference server of the pool and what the policy knows of it. */
export interface PoolMember {
  readonly server: InferenceServer;
  /** Requests in flight to it now. */
  inFlight: number;
  /** In rotation: false after a failure, until a probe answers and it has the current weights. */
  up: boolean;
  /** Weights version it serves (0: the initial weights). */
  version: number;
  /** LoRA adapter name it serves, when one is loaded. */
  adapter?: string;
  /** Requests sent to it in total. */
  sent: number;
  /** Times it was taken out of rotation. */
  downs: number;
}

export interface PoolOptions {
  /** Time between probes of a server out of rotation. */
  probeMs: number;
  log: Logger;
  signal: AbortSignal;
  /**
   * Runs before a probed server is back in rotation (bring it to the current weights); a throw keeps it out and
   * probing goes on.
   */
  readmit?: (member: PoolMember) => Promise<void>;
}

/** Sticky assignments kept (oldest dropped first): far more than rollouts in flight. */
const MAX_STICKY = 65_536;

/**
 * Several inference servers serving the same model. A request goes to the server its key (the rollout id) used
 * before while that one is up (its prefix cache holds the conversation), else to the up server with the fewest
 * requests in flight (ties: the one sent fewest). A server whose request fails with a connection error, a
 * timeout or a 5xx leaves the rotation (unless it is the last one in it) and is probed (`GET /v1/models`) every
 * `probeMs` until it answers and `readmit` brought it to the current weights.
 * @example
 * const pool = new ServerPool(urls.map((u) => new InferenceServer(config, u)), { probeMs: 2000, log, signal });
 * const answer = await pool.use("rollout-7", (server) => server.chat(body, signal));
 */
export class ServerPool {
  readonly members: PoolMember[];
  private readonly sticky = new Map<string, PoolMember>();

  constructor(
    servers: InferenceServer[],
    private readonly options: PoolOptions,
  ) {
    this.members = servers.map((server) => ({
      server,
      inFlight: 0,
      up: true,
      version: 0,
      sent: 0,
      downs: 0,
    }));
  }

  /** Servers in rotation now. */
  get up(): PoolMember[] {
    return this.members.filter((m) => m.up);
  }

  /** The server a request with `key` goes to now (without counting it); throws a 503 when none is up. */
  pick(key?: string): PoolMember {
    const held = key === undefined ? undefined : this.sticky.get(key);
    if (held?.up) return held;
    let best: PoolMember | undefined;
    for (const m of this.members) {
      if (!m.up) continue;
      if (
        best === undefined ||
        m.inFlight < best.inFlight ||
        (m.inFlight === best.inFlight && m.sent < best.sent)
      )
        best = m;
    }
    if (best === undefined) {
      const urls = this.members.map((m) => m.server.baseUrl).join(", ");
      throw new HttpStatusError(503, urls, "no inference server is in rotation (every one failed; probing)");
    }
    if (key !== undefined) {
      this.sticky.delete(key);
      this.sticky.set(key, best);
      if (this.sticky.size > MAX_STICKY) {
        const oldest = this.sticky.keys().next().value;
        if (oldest !== undefined) this.sticky.delete(oldest);
      }
    }
    return best;
  }

  /** Runs `work` on the server `key` routes to, counting it in flight; a server-side failure takes it out. */
  async use<T>(key: string | undefined, work: (server: InferenceServer) => Promise<T>): Promise<T> {
    const member = this.pick(key);
    member.inFlight++;
    member.sent++;
    try {
      return await work(member.server);
    } catch (error) {
      if (takesServerDown(error) && !this.options.signal.aborted) this.takeDown(member, error);
      throw error;
    } finally {
      member.inFlight--;
    }
  }

  /**
   * Takes `member` out of rotation (idempotent) and probes it until it is back. The last server in rotation
   * stays: requests keep going to it, and their own retries and failures report the problem.
   */
  takeDown(member: PoolMember, error: unknown): void {
    if (!member.up || this.up.length <= 1) return;
    member.up = false;
    member.downs++;
    const left = this.up.length;
    this.options.log.warn(
      `inference server ${member.server.baseUrl} out of rotation (${left} of ${this.members.length} left): ${errorMessage(error)}`,
    );
    void this.probe(member);
  }

  private async probe(member: PoolMember): Promise<void> {
    const { signal, probeMs, log } = this.options;
    while (!signal.aborted) {
      try {
        await sleep(probeMs, signal);
      } catch {
        return;
      }
      try {
        await member.server.getJson("/v1/models", signal, Math.max(1000, probeMs));
        await this.options.readmit?.(member);
      } catch (error) {
        log.debug(`probe of ${member.server.baseUrl}: ${errorMessage(error)}`);
        continue;
      }
      member.up = true;
      log.info(`inference server ${member.server.baseUrl} back in rotation at weights v${member.version}`);
      return;
    }
  }
}

/** A failure that says the server (not the request) is broken: connection errors, timeouts, 5xx. */
export function takesServerDown(error: unknown): boolean {
  const status = statusOf(error);
  if (status !== undefined) return status >= 500;
  return isTransient(error);
}
