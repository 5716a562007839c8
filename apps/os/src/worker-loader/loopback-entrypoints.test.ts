import { env, exports } from "cloudflare:workers";
import { errorCode } from "iterate/errors";
import { describe, expect, test } from "vitest";
import { unwrapCallback, type RunnerCallbacks } from "../runner/runner-protocol.ts";
import { ensureContext } from "../itx/context-lifecycle.ts";
import { hostStub } from "../capability-host/host-stub.ts";
import { lending } from "./runner-client.ts";

// The runner's callbacks answer an expected refusal as a value: thrown across the dev registry it
// would be logged by workerd as uncaught (e2e/suites/onboarding.test.ts reads that log).
const callbacks = (exports as unknown as { RunnerCallbackEntrypoint: RunnerCallbacks }).RunnerCallbackEntrypoint;
const ENDED = { ok: false, error: { code: "PERMISSION_DENIED", message: expect.stringContaining("call has ended") } };

describe("RunnerCallbackEntrypoint", () => {
  test("a token whose call has ended is refused as a value on every callback, and nothing is fetched", async () => {
    expect(await callbacks.itx("no-call-lent-this")).toEqual(ENDED);
    expect(await callbacks.egress("no-call-lent-this", new Request("http://127.0.0.1:9/never"))).toEqual(ENDED);
    const inline = { url: "http://127.0.0.1:9/never", method: "GET", headers: [], body: null, redirect: "follow" as const };
    expect(await callbacks.egressInline("no-call-lent-this", inline)).toEqual(ENDED);
    // A token that is not even a string is the same refusal.
    expect(await callbacks.itx(42 as unknown as string)).toEqual(ENDED);
  });

  test("the runner turns the refusal back into an error carrying its code, and passes a value through", () => {
    expect(unwrapCallback({ ok: true, value: 7 })).toBe(7);
    let thrown: unknown;
    try {
      unwrapCallback({ ok: false, error: { code: "PERMISSION_DENIED", message: "its call has ended" } });
    } catch (error) {
      thrown = error;
    }
    expect(errorCode(thrown)).toBe("PERMISSION_DENIED");
    expect(thrown).toMatchObject({ name: "ItxError", message: "[PERMISSION_DENIED] its call has ended" });
  });

  test("an inline answer is read no further than the length it declares: one longer is refused, not read whole (RUNNER_EGRESS_INLINE_MAX_BYTES)", async () => {
    const projectId = `prj_inline${Date.now()}`;
    const caller = { principal: "tester", origin: "/", connectionId: "conn-inline" };
    await ensureContext(env, { projectId, path: "/", name: "test", parent: null, ancestors: [], caller });
    let pulled = 0;
    // A fetch shadow (code too) that declares one byte and sends 4 MiB.
    const liar = () => {
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled += 1;
          if (pulled > 64) controller.close();
          else controller.enqueue(new Uint8Array(65_536).fill(0x61));
        },
      });
      return new Response(body, { headers: { "content-length": "1" } });
    };
    await hostStub(env, projectId, "/").provide({ path: ["fetch"], capability: liar, caller });
    const props = { principal: "tester", projectId, origin: "/", path: "/", depth: 0 };
    const inline = { url: "https://example.com/x", method: "GET", headers: [], body: null, redirect: "manual" as const };
    const answer = await lending(props, (token) => callbacks.egressInline(token, inline));
    expect(answer).toMatchObject({ ok: false });
    expect(pulled).toBeLessThan(16);
  });
});
