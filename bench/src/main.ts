// `pnpm bench`: starts a local OS (or uses BASE_URL) and prints every figure as `name: value unit`.
import { measureBaselines } from "./baselines.ts";
import { measureProcessors } from "./processors.ts";
import { measureStreams } from "./streams.ts";
import { openTarget } from "./target.ts";

const target = await openTarget();
try {
  console.log(`# iterate benchmarks against ${target.baseUrl} (node ${process.version})`);
  const baselines = await measureBaselines(target);
  await measureStreams(target, baselines);
  await measureProcessors(target);
} finally {
  await target.close();
}
