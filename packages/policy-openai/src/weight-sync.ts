import { AirError, type WeightsRef } from "@air/core";
import { loraRoutes, type OpenAIPolicyConfig } from "./config.ts";
import type { PolicyEnvironment } from "./environment.ts";
import { requestModel, type ServerKind } from "./kinds.ts";
import type { PoolMember, ServerPool } from "./pool.ts";
import { loadWeights, unloadAdapter } from "./weights.ts";

/**
 * The weights a policy's servers serve: the version generations carry, the model name requests use (the LoRA
 * adapter's once one is loaded), updates to every server in rotation, a readmitted server brought to the latest
 * weights first, and (stock vLLM's versioned adapters) an old adapter unloaded once no request in flight uses it.
 * Loads run one at a time.
 * @example const sync = new WeightSync(pool, config, env, "Qwen/Qwen3-0.6B", kindOf); await sync.load(weights);
 */
export class WeightSync {
  /** Weights version of the latest completed update (0 before any). */
  version = 0;
  /** Model name sent with requests: the base model's, or the loaded adapter's as the server selects it (`requestModel`). */
  model: string;
  /** The last weights loaded (a server back in rotation gets them first). */
  private latest?: WeightsRef;
  /** Weight loads run one at a time (an update, or a server being readmitted). */
  private loading: Promise<unknown> = Promise.resolve();
  /** The LoRA adapter loaded last (its name on the servers). */
  private adapter?: string;
  /** Requests in flight per model name. */
  private readonly inUse = new Map<string, number>();

  constructor(
    private readonly pool: ServerPool,
    private readonly config: OpenAIPolicyConfig,
    private readonly env: PolicyEnvironment,
    private readonly baseModel: string,
    private readonly kindOf: () => Promise<ServerKind>,
  ) {
    this.model = baseModel;
  }

  /** Counts a request in flight for `model` until the returned function is called. */
  using(model: string): () => void {
    this.inUse.set(model, (this.inUse.get(model) ?? 0) + 1);
    return () => this.inUse.set(model, (this.inUse.get(model) ?? 1) - 1);
  }

  /**
   * Loads `weights` into every server in rotation at once and resolves when all of them serve it; a server whose
   * load fails leaves the rotation (it gets the latest weights before it is readmitted). Fails when none took it.
   */
  async load(weights: WeightsRef): Promise<void> {
    const kind = await this.kindOf();
    this.latest = weights;
    const model = await this.serialized(async () => {
      const targets = this.pool.up;
      if (targets.length === 0) {
        throw new AirError(
          "POLICY_FAILED",
          `no inference server in rotation to load weights v${weights.version}`,
          { plugin: "openai", hook: "loadWeights" },
        );
      }
      const results = await Promise.allSettled(targets.map((m) => this.loadInto(m, weights, kind)));
      const loaded = results.flatMap((r) => (r.status === "fulfilled" ? [r] : []));
      const failed = results.flatMap((r, i) =>
        r.status === "rejected" ? [{ m: targets[i], e: r.reason }] : [],
      );
      if (loaded.length === 0) throw failed[0]?.e;
      for (const { m, e } of failed) if (m !== undefined) this.pool.takeDown(m, e);
      return loaded[0]?.value;
    });
    const previous = this.adapter;
    if (model !== undefined) {
      this.adapter = model;
      this.model = requestModel(kind, this.baseModel, model);
    }
    this.version = weights.version;
    if (
      model !== undefined &&
      previous !== undefined &&
      previous !== model &&
      loraRoutes(this.config, kind).naming === "versioned"
    ) {
      for (const m of this.pool.members) void this.unloadWhenUnused(m, previous, kind);
    }
  }

  /** A probed server comes back: first the latest weights (and its old adapter unloaded). */
  async readmit(member: PoolMember): Promise<void> {
    const latest = this.latest;
    if (latest === undefined || member.version >= latest.version) return;
    const kind = await this.kindOf();
    const before = member.adapter;
    await this.serialized(() => this.loadInto(member, latest, kind));
    if (
      before !== undefined &&
      before !== member.adapter &&
      loraRoutes(this.config, kind).naming === "versioned"
    )
      void this.unloadWhenUnused(member, before, kind);
  }

  /** One server to `weights`; records what it serves. */
  private async loadInto(
    member: PoolMember,
    weights: WeightsRef,
    kind: ServerKind,
  ): Promise<string | undefined> {
    const model = await loadWeights(member.server, this.config, weights, this.env, kind);
    member.version = weights.version;
    if (model !== undefined) member.adapter = model;
    return model;
  }

  /** Versioned adapters: unloads adapter `name` from `member` once no request in flight uses it (bounded wait). */
  private async unloadWhenUnused(member: PoolMember, name: string, kind: ServerKind): Promise<void> {
    const model = requestModel(kind, this.baseModel, name);
    if (name === this.baseModel || name === this.adapter) return;
    const until = Date.now() + this.config.admin_timeout_ms;
    while ((this.inUse.get(model) ?? 0) > 0 && Date.now() < until && !this.env.signal.aborted) {
      await Bun.sleep(20);
    }
    if (this.env.signal.aborted || name === this.adapter) return;
    await unloadAdapter(member.server, this.config, name, this.env, kind);
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.loading.then(work, work);
    this.loading = run.catch(() => undefined);
    return run;
  }
}
