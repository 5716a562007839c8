import type { Env as OsEnv } from "../src/env.ts";
import type { TallyProcessorHost } from "./tally-processor.ts";

declare global {
  namespace Cloudflare {
    interface Env extends OsEnv {
      TEST_PROCESSORS: DurableObjectNamespace<TallyProcessorHost>;
    }
    interface GlobalProps {
      mainModule: typeof import("./test-worker.ts");
    }
  }
}
