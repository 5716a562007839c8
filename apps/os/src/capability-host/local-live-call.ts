import { errorCode } from "iterate/errors";
import type { Env } from "../env.ts";
import { hostStub } from "./host-stub.ts";
import { disconnectedError, isDisconnectError } from "./live-capability.ts";
import { callRegistered, liveKey, type LocalLiveCall } from "./live-registry.ts";

/**
 * Makes a live call the host handed back (see live-registry.ts) through the provider's request in
 * this isolate. When the value is no longer here (revoked through this isolate, or its session just
 * closed), `viaHost` asks the host to make the call, which then answers with what it knows.
 */
export async function callLocalLive(env: Env, call: LocalLiveCall, args: unknown[], viaHost: () => Promise<unknown>): Promise<unknown> {
  const pending = callRegistered(liveKey(call.projectId, call.context, call.providedAtOffset), call.shape, call.remainder, args);
  if (pending === undefined) return viaHost();
  let result;
  try {
    result = await pending;
  } catch (error) {
    if (errorCode(error) === undefined && isDisconnectError(error)) {
      await hostStub(env, call.projectId, call.context)
        .disconnectConnection(call.connectionId)
        .catch(() => 0);
      throw disconnectedError(call.mountPath, call.context);
    }
    throw error;
  }
  if ("value" in result) return result.value;
  return hostStub(env, call.projectId, call.context).unpark(result.parked);
}
