import type { Env } from "../env.ts";
import type { CapabilityHostDurableObject } from "./capability-host-durable-object.ts";

/** The methods of a capability host, as seen through a stub. */
export type CapabilityHostStub = Pick<
  CapabilityHostDurableObject,
  "provide" | "revoke" | "invoke" | "resolve" | "provides" | "describeOwn" | "describeChain" | "birth" | "disconnectConnection" | "durableWorker" | "forgetHints" | "confinement"
>;

/** The capability host of context `path` in project `projectId`. */
export function hostStub(env: Env, projectId: string, path: string): CapabilityHostStub {
  return env.CAPABILITY_HOST_PROCESSORS.getByName(`${projectId}:${path}`) as unknown as CapabilityHostStub;
}
