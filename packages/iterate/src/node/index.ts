/**
 * `iterate/node`: a connection owner for Node scripts and live providers.
 * @module
 */
export { connectIterate, type IterateConnection } from "./connect-iterate.ts";
