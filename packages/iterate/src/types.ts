/**
 * The public contract of iterate: handwritten, in parts under `contract/` that import nothing but
 * each other. Clients, scripts, loaded workers and the platform program against these shapes. When
 * prose and the contract disagree, the contract wins.
 * @module
 */

export type * from "./contract/errors.ts";
export type * from "./contract/discovery.ts";
export type * from "./contract/streams.ts";
export type * from "./contract/domains.ts";
export type * from "./contract/remote-protocols.ts";
export type * from "./contract/scheduler.ts";
export type * from "./contract/repos.ts";
export type * from "./contract/itx.ts";
export type * from "./contract/session.ts";
export type * from "./contract/loaded-code.ts";
export type * from "./contract/processors.ts";
