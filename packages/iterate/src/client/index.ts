/**
 * `iterate/client`: connect to an iterate OS from Node or a browser.
 *
 * @example
 * import { connectItx } from "iterate/client";
 * using session = connectItx({ baseUrl: "http://127.0.0.1:8787", auth: { type: "admin-secret", secret } });
 * console.log((await session.__describe()).principal);
 * @module
 */
export {
  connectItx,
  withItx,
  type WithItxOptions,
  type AgentContext,
  type ConnectAgentOptions,
  type ConnectOptions,
  type ConnectProjectOptions,
  type ConnectWithAuthOptions,
  type Handle,
} from "./connect-itx.ts";
export { mounted } from "./mounted.ts";
export { readEvents, unpackEvents, type ReadEventsOptions, type ReadableStream } from "./read-events.ts";
export { errorCode, errorMessage, hasErrorCode, ItxError } from "../errors/index.ts";
export type * from "../types.ts";
