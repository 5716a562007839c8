// What the OS Worker and the runner Worker (runner-worker.ts, a separate workerd process locally)
// say to each other. Types only: both sides import it, and the runner is loaded without a bundler.

/** Code to load into a Loader isolate of the runner, under `id` (cached there by id). */
export interface RunnerLoad {
  /** The isolate's id: names its code and its authority (scope), so two scopes never share one. */
  id: string;
  /**
   * What differs between calls of one id without changing their authority: the reaction chain
   * their writes are stamped with. Calls of one id share an isolate one variant at a time, so the
   * token any call there borrows stamps its writes the same way (absent: one variant).
   */
  variant?: string;
  compatibilityDate: string;
  mainModule: string;
  modules: Record<string, string | { js: string }>;
  /** Passed as the Loader's `limits` (enforced by Cloudflare in a deployment). */
  limits: { cpuMs: number };
  /** Give the isolate `env.ITX` (dynamic workers, source capabilities); scripts get their itx as an argument. */
  itxBinding: boolean;
}

/**
 * A Durable Object class of a loaded isolate, hosted as a facet (with its own SQLite) of the
 * runner's facet host for one context. Its state lives with the runner, never in the OS process.
 */
export interface RunnerFacet {
  /** Names the facet host: one per context of a project (the OS passes [projectId, path] as JSON). */
  host: string;
  /** The facet's name within its host: the same key reaches the same state again. */
  key: string;
  /** The exported DurableObject class. */
  className: string;
}

/** A call of a member of an entrypoint (or, with `facet`, of a facet) of a loaded isolate. */
export interface RunnerCall {
  /** Call a member of this facet instead of an entrypoint (`entrypoint` and `props` are then unused). */
  facet?: RunnerFacet;
  entrypoint?: string;
  props?: Record<string, unknown>;
  /** Member path on the entrypoint, already checked by the OS (no reserved names). */
  path: string[];
  args: unknown[];
}

/**
 * The authority of one call, lent by the OS for exactly as long as the call runs: a random token
 * the OS maps to the call's scope. The loaded isolate's `env.ITX.get()` and bare `fetch()` reach the
 * OS's `RunnerCallbackEntrypoint` with it; code still running after its call ended finds no token
 * and is refused. The token never enters the isolate (it sits in the runner's own entrypoint props).
 */
export type LentToken = string;

/**
 * The OS's word, for one call, that its bare `fetch()` may leave from the runner itself when the
 * request carries no secret placeholder (runner/direct-egress.ts): when the call started, nothing on
 * its context's chain shadowed `fetch` and the code was not in a jail. Valid while no `fetch`
 * shadow was provided anywhere since: a provide raises the OS's floor past `epoch` and tells the
 * runner (`revokeDirectEgress`) before it answers. Lives in the runner's memory beside the call's
 * token, never in the isolate, and ends with the call.
 */
export interface DirectEgressVerdict {
  /** The OS's revocation floor when the verdict was made. */
  epoch: number;
  /** The OS's EGRESS_ALLOW_PRIVATE_ADDRESSES: the runner sends only when its own is the same. */
  policy: string;
}

/** A request as plain data: one RPC carries it whole (see RUNNER_EGRESS_INLINE_MAX_BYTES). */
export interface InlineRequest {
  url: string;
  method: string;
  headers: [string, string][];
  body: ArrayBuffer | null;
  redirect: Request["redirect"];
}

/** A response as plain data when its body is small and its length known; the Response itself otherwise. */
export type EgressAnswer = { inline: { status: number; statusText: string; headers: [string, string][]; body: ArrayBuffer | null } } | { response: Response };

/**
 * A callback's answer: its value, or the coded refusal it meant to throw. The runner reaches the OS
 * through the dev registry, and workerd logs every exception thrown across that hop as uncaught
 * (with a "code had hung" line after it), so an expected refusal (code still running after its
 * call ended) travels as a value; `unwrapCallback` throws it on the runner's side.
 */
export type CallbackAnswer<T> = { ok: true; value: T } | { ok: false; error: { code: string; message: string; details?: Record<string, unknown> } };

/** The OS's entrypoint the runner calls back through (its OS binding). */
export interface RunnerCallbacks {
  /** The itx the call's scope acts through. */
  itx(token: LentToken): Promise<CallbackAnswer<unknown>>;
  /** The call's scope's egress: `itx.fetch` of its origin. */
  egress(token: LentToken, request: Request): Promise<CallbackAnswer<Response>>;
  /** The same egress for a request small enough to travel whole; the answer is inline when it is small too. */
  egressInline(token: LentToken, request: InlineRequest): Promise<CallbackAnswer<EgressAnswer>>;
}

/** The value a callback answered, or its refusal thrown as an error whose message starts `[CODE]` (as ItxError's does). */
export function unwrapCallback<T>(answer: CallbackAnswer<T>): T {
  if (answer.ok) return answer.value;
  const { code, message, details } = answer.error;
  throw Object.assign(new Error(`[${code}] ${message}`), { name: "ItxError", code, ...(details ? { details } : {}) });
}

/**
 * How a call into the runner ended. Failures travel as values, so their codes survive the hop;
 * `deadline` marks the runner's own deadline (TIMEOUT), apart from code that threw a TIMEOUT.
 */
export type RunnerAnswer =
  | { ok: true; value: unknown }
  | { ok: false; error: { message: string; code?: string }; deadline?: true }
  /** Nothing ran: this runner is draining before its replacement; ask again (the next runner answers). */
  | { ok: false; refused: true; error: { message: string } };

/** The calls a runner takes, on its entrypoint or on a session held open (`RunnerApi.session`). */
export interface RunnerCalls {
  /** Runs a prepared script module's `run(itx)`; answers a deadline failure past `timeoutMs`. */
  runScript(load: RunnerLoad, itx: unknown, token: LentToken, timeoutMs: number, direct?: DirectEgressVerdict): Promise<RunnerAnswer>;
  /** Calls a member of an entrypoint of a loaded isolate; answers a deadline failure past `timeoutMs`. */
  invoke(load: RunnerLoad, call: RunnerCall, token: LentToken, timeoutMs: number, direct?: DirectEgressVerdict): Promise<RunnerAnswer>;
  /** Voids every direct-egress verdict older than `floor`, of calls in flight and of calls still on their way. Also while draining. */
  revokeDirectEgress(floor: number): Promise<RunnerAnswer>;
  /** Answers at once: the OS asks it after a runner died or drained, before it sends work to the next one. */
  ping(): "ready" | "draining";
}

/** The runner's entrypoint as the OS sees it through its RUNNER binding. */
export interface RunnerApi extends RunnerCalls {
  /**
   * Opens a session: the same calls over one connection kept open, where each call on the
   * entrypoint opens its own (see HeldRunner in worker-loader/runner-client.ts). The runner holds
   * `watch` for as long as the session lives: when the runner's process is gone, the OS's side
   * of `watch` is disposed, so the OS learns that the session is dead without calling it.
   */
  session(watch: RunnerSessionWatch): RunnerCalls & Disposable;
}

/** What the OS hands a session to hold (see `RunnerApi.session`): only its disposal matters. */
export interface RunnerSessionWatch {
  /** A copy the runner keeps past the call (parameters are released when a call returns). */
  dup?(): RunnerSessionWatch;
  /** The runner drains before its replacement: send nothing more on this session (see RUNNER_DRAIN_NOTICE_MS). */
  draining?(): void;
  [Symbol.dispose]?(): void;
}
