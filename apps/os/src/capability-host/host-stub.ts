import { throwCoded } from "../api/coded-result.ts";
import type { CapabilityHostDurableObject } from "./capability-host-durable-object.ts";

type Host = Pick<
  CapabilityHostDurableObject,
  "provide" | "revoke" | "invoke" | "resolve" | "provides" | "describeOwn" | "describeChain" | "birth" | "disconnectConnection" | "durableWorker" | "forgetHints" | "confinement"
>;

type Unfailing<R> = R extends Promise<infer V> ? Promise<Exclude<V, { __itxCodedFailure: unknown }>> : R;

/**
 * The methods of a capability host, as seen through a stub that throws its expected failures as
 * ItxErrors again. (The host answers them as values: a Durable Object method that throws is printed
 * by workerd as an uncaught exception with its stack, for every NOT_FOUND a caller can provoke.)
 */
export type CapabilityHostStub = { [K in keyof Host]: Host[K] extends (...args: infer A) => infer R ? (...args: A) => Unfailing<R> : never };

/** The capability host of context `path` in project `projectId`. */
export function hostStub(env: Env, projectId: string, path: string): CapabilityHostStub {
  const stub = env.CAPABILITY_HOST.getByName(`${projectId}:${path}`) as unknown as Host;
  return {
    provide: async (request) => throwCoded(await stub.provide(request)),
    revoke: async (request) => throwCoded(await stub.revoke(request)),
    invoke: async (request) => throwCoded(await stub.invoke(request)),
    durableWorker: async (input) => throwCoded(await stub.durableWorker(input)),
    resolve: (input) => stub.resolve(input),
    provides: (capabilityPath) => stub.provides(capabilityPath),
    describeOwn: () => stub.describeOwn(),
    describeChain: () => stub.describeChain(),
    birth: () => stub.birth(),
    disconnectConnection: (connectionId) => stub.disconnectConnection(connectionId),
    forgetHints: () => stub.forgetHints(),
    confinement: () => stub.confinement(),
  } as CapabilityHostStub;
}
