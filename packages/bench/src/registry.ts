import { asyncBenchmark } from "./benchmarks/async.ts";
import { auditBenchmark } from "./benchmarks/audit.ts";
import { containersBenchmark } from "./benchmarks/containers.ts";
import { faultsBenchmark } from "./benchmarks/faults.ts";
import { hostsBenchmark } from "./benchmarks/hosts.ts";
import { localBenchmark } from "./benchmarks/local.ts";
import type { BenchOptions } from "./benchmarks/pipeline.ts";
import { pipelineBenchmark } from "./benchmarks/pipeline.ts";
import { quickstartBenchmark } from "./benchmarks/quickstart.ts";
import { resumeBenchmark } from "./benchmarks/resume.ts";
import { sandboxBenchmark } from "./benchmarks/sandbox.ts";
import { scaleBenchmark } from "./benchmarks/scale.ts";
import { scaleStoreBenchmark } from "./benchmarks/scale-store.ts";
import { storeBenchmark } from "./benchmarks/store.ts";
import { treeBenchmark } from "./benchmarks/tree.ts";
import { treeHarborBenchmark } from "./benchmarks/tree-harbor.ts";
import type { BenchReport } from "./report.ts";

/** Every benchmark by the name `bun run bench <name>` takes. */
export const BENCHMARKS = {
  pipeline: pipelineBenchmark,
  async: asyncBenchmark,
  containers: containersBenchmark,
  local: localBenchmark,
  store: storeBenchmark,
  quickstart: quickstartBenchmark,
  faults: faultsBenchmark,
  tree: treeBenchmark,
  "tree-harbor": treeHarborBenchmark,
  audit: auditBenchmark,
  hosts: hostsBenchmark,
  sandbox: sandboxBenchmark,
  resume: resumeBenchmark,
  scale: scaleBenchmark,
  "scale-store": scaleStoreBenchmark,
} satisfies Record<string, (options: BenchOptions) => Promise<BenchReport>>;

export type BenchmarkName = keyof typeof BENCHMARKS;
