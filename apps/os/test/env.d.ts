import type { TallyProcessorHost } from "./tally-processor.ts";
import type { EchoProcessorHost } from "./echo-processor.ts";

declare global {
  namespace Cloudflare {
    interface Env extends globalThis.Env {
      TEST_PROCESSORS: DurableObjectNamespace<TallyProcessorHost>;
      ECHO_PROCESSORS: DurableObjectNamespace<EchoProcessorHost>;
    }
    interface GlobalProps {
      mainModule: typeof import("./test-worker.ts");
    }
  }
}
