import type { Env as OsEnv } from "../src/env.ts";

declare global {
  namespace Cloudflare {
    interface Env extends OsEnv {}
    interface GlobalProps {
      mainModule: typeof import("../src/worker.ts");
    }
  }
}
