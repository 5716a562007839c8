import { WorkerEntrypoint } from "cloudflare:workers";
import { isolateItx, type ItxRpcTarget } from "../itx/itx-rpc-target.ts";
import { asCoded } from "../api/coded-result.ts";
import type { CallbackAnswer, EgressAnswer, InlineRequest, LentToken, RunnerCallbacks } from "../runner/runner-protocol.ts";
import type { IsolateProps } from "./isolate-props.ts";
import { borrowed } from "./runner-client.ts";
import { UNTRUSTED_LIMITS } from "./untrusted-limits.ts";
import { readBounded } from "../egress/bounded-response.ts";

// The Worker's loopback entrypoints: how code loaded into isolates (here, or in the runner) reaches
// the OS. Each builds the itx its props (or the props its token lends) allow, and nothing more.


/**
 * `env.ITX` inside loaded isolates: `get()` answers an itx scoped to the origin context. A live
 * stub cannot be put into a loaded worker's env, so the env carries this entrypoint (with props)
 * and the isolate asks it for the handle.
 */
export class ItxEntrypoint extends WorkerEntrypoint<Env, IsolateProps> {
  get(): ItxRpcTarget {
    return isolateItx(this.env, this.ctx.props);
  }
}


/**
 * Every loaded isolate's `globalOutbound`: a bare `fetch()` there is `itx.fetch` of its origin
 * context, so it takes the same road as every other egress (shadows on the chain, then the pipe).
 */
export class EgressEntrypoint extends WorkerEntrypoint<Env, IsolateProps> {
  override async fetch(request: Request): Promise<Response> {
    return isolateItx(this.env, this.ctx.props).fetch(request);
  }
}

/**
 * What the runner calls back: the loaded code's `env.ITX.get()` and bare `fetch()`, scoped to the
 * call that lent the token. The same roads an isolate of this Worker takes (ItxEntrypoint, EgressEntrypoint).
 * Expected refusals (a token whose call has ended, an egress the rules refuse) are answered as
 * values (`CallbackAnswer`): thrown across the dev registry, each would be logged as uncaught.
 */
export class RunnerCallbackEntrypoint extends WorkerEntrypoint<Env> implements RunnerCallbacks {
  itx(token: LentToken): Promise<CallbackAnswer<unknown>> {
    return asCoded(() => isolateItx(this.env, borrowed(token)));
  }

  egress(token: LentToken, request: Request): Promise<CallbackAnswer<Response>> {
    return asCoded(() => isolateItx(this.env, borrowed(token)).fetch(request));
  }

  egressInline(token: LentToken, input: InlineRequest): Promise<CallbackAnswer<EgressAnswer>> {
    return asCoded(async () => {
      const props = borrowed(token);
      const request = new Request(input.url, { method: input.method, headers: input.headers, body: input.body, redirect: input.redirect });
      const response = await isolateItx(this.env, props).fetch(request);
      // Only an identity-encoded length says how much arrayBuffer() reads (a small gzip body may inflate to anything).
      const encoded = (response.headers.get("content-encoding") ?? "identity") !== "identity";
      const length = response.body === null ? 0 : Number(response.headers.get("content-length") ?? Number.NaN);
      if (encoded || !(length <= UNTRUSTED_LIMITS.RUNNER_EGRESS_INLINE_MAX_BYTES)) return { response };
      // The length is the answerer's word (a fetch shadow is code too): the body is read no further
      // than it, and a body longer than its own length is refused, not read whole.
      const body =
        response.body === null
          ? null
          : (await readBounded(response, UNTRUSTED_LIMITS.RUNNER_EGRESS_INLINE_MAX_BYTES, "RUNNER_EGRESS_INLINE_MAX_BYTES", UNTRUSTED_LIMITS.CALL_TIMEOUT_MS)).buffer as ArrayBuffer;
      return { inline: { status: response.status, statusText: response.statusText, headers: [...response.headers], body } };
    });
  }
}
