// The runner: a Worker of its own that loads untrusted code into Loader isolates, run locally in a
// separate workerd process (apps/os/scripts/runner-process.ts) that a watchdog restarts. Whatever
// that code does (an endless loop, a backtracking regex, filling the heap), it holds or crashes
// this process only; the OS calls it over a service binding and keeps its own deadline.
//
// Loaded without a bundler (types are stripped; runner-process.ts loads the relative imports as
// modules of their own): import nothing but `cloudflare:workers`, types and import-free modules.
import { DurableObject, RpcTarget, WorkerEntrypoint, exports } from "cloudflare:workers";
import { DirectEgressVerdicts, sendDirect } from "./direct-egress.ts";
import { smallBody } from "./small-body.ts";
import { unwrapCallback, type DirectEgressVerdict, type LentToken, type RunnerAnswer, type RunnerApi, type RunnerCall, type RunnerCallbacks, type RunnerCalls, type RunnerLoad, type RunnerSessionWatch } from "./runner-protocol.ts";

interface RunnerEnv {
  /** UNTRUSTED_LIMITS.RUNNER_DRAIN_MAX_MS, from runner-process.ts. */
  DRAIN_MAX_MS: number;
  /** UNTRUSTED_LIMITS.RUNNER_DRAIN_NOTICE_MS, from runner-process.ts. */
  DRAIN_NOTICE_MS: number;
  /** The watchdog's secret for POST /drain, from runner-process.ts; empty: the route is off. */
  CONTROL_TOKEN?: string;
  /** UNTRUSTED_LIMITS.RUNNER_EGRESS_INLINE_MAX_BYTES, from runner-process.ts. */
  EGRESS_INLINE_MAX_BYTES: number;
  /**
   * The OS's EGRESS_ALLOW_PRIVATE_ADDRESSES, from runner-process.ts, which also set this process's
   * network filter from it. Absent when the filter cannot express it: nothing then leaves directly.
   */
  DIRECT_EGRESS_POLICY?: string;
  /** The direct road's network service (its allow and deny lists enforce the policy after DNS); set with DIRECT_EGRESS_POLICY. */
  NETWORK?: Fetcher;
  LOADER: WorkerLoader;
  /** FacetHostDurableObject: durable dynamic workers and durable source capabilities, as facets. */
  FACET_HOSTS: DurableObjectNamespace<FacetHostDurableObject>;
  /** The OS's RunnerCallbackEntrypoint (through the dev registry). */
  OS: Service & RunnerCallbacks;
}

// Loopback entrypoints of this Worker (ctx.exports). Typed here: the platform's global types
// describe the OS Worker's exports, not the runner's.
const loopback = exports as unknown as Record<"ScopeItxEntrypoint" | "ScopeEgressEntrypoint", (options: { props: { id: string } }) => Fetcher>;

// The tokens lent by calls in flight, by isolate id, each with its call's direct-egress verdict
// (or none), and the variant those calls share. An isolate serves concurrent calls of one scope and
// one variant only (see isolateIdOf), so any token lent for its id is the right one. Tokens are
// plain strings: an RPC stub received by one call cannot be used from another call's request context.
const lent = new Map<string, { variant: string; tokens: Map<LentToken, DirectEgressVerdict | undefined> }>();
const verdicts = new DirectEgressVerdicts();

/**
 * The isolate a call runs in. Its load's id names the code and the authority; `variant` (a
 * reaction chain) only stamps what the call writes. Calls of one id share its isolate, one variant
 * at a time: while calls of another variant hold it, the call gets an isolate of its own variant,
 * so every token lent for an isolate's id carries the same stamps. Chosen and lent in one
 * synchronous step (see `within`), so no two variants ever hold one id.
 */
function isolateIdOf(load: RunnerLoad): { id: string; variant: string } {
  const variant = load.variant ?? "";
  const held = lent.get(load.id);
  if (!held || held.variant === variant) return { id: load.id, variant };
  return { id: `${load.id}~${JSON.stringify(variant)}`, variant };
}

function tokenOf(id: string): LentToken {
  const token = lent.get(id)?.tokens.keys().next().value;
  if (token === undefined) throw Object.assign(new Error(`[PERMISSION_DENIED] no call is in flight for this isolate (${id.split(":")[0]}): its authority ended with its call`), { name: "ItxError", code: "PERMISSION_DENIED" });
  return token;
}

// Calls in flight, and since when this runner drains. A call that outlived its deadline may have
// left code running (a timer chain yields, so the watchdog's hang check never fires for it): the
// runner then takes no new calls, lets the others finish (at most RUNNER_DRAIN_MAX_MS), and fails
// /health, so that the watchdog replaces it and the leftover code dies with it.
let inFlight = 0;
let drainingSince: number | undefined;
/** Why this runner drains: what /health says once it has drained. */
let drainReason = "a call outlived its deadline, and code it left may still run";
// Set by the watchdog's POST /drain (the runner grew past RUNNER_RSS_RECYCLE_MB): the runner
// keeps taking calls and starts to drain at the first moment none is in flight, so no call is cut
// short and new calls wait only for the replacement to start.
let recycleReason: string | undefined;

function drainIfIdleAndRecycling(): void {
  if (recycleReason === undefined || inFlight > 0) return;
  beginDraining(recycleReason);
}

// The sessions open now (RunnerSession), each with how it tells its OS side that this runner
// drains, and those that have not heard yet since the drain began (see RUNNER_DRAIN_NOTICE_MS).
const openSessions = new Map<RunnerSession, () => void>();
const unnoticed = new Set<RunnerSession>();

function beginDraining(reason?: string): void {
  if (drainingSince !== undefined) return;
  drainingSince = Date.now();
  if (reason !== undefined) drainReason = reason;
  for (const [session, tell] of openSessions) {
    unnoticed.add(session);
    tell();
  }
}

function drained(env: RunnerEnv): boolean {
  if (drainingSince === undefined) return false;
  const since = Date.now() - drainingSince;
  return (inFlight === 0 && (unnoticed.size === 0 || since > env.DRAIN_NOTICE_MS)) || since > env.DRAIN_MAX_MS;
}

const REFUSED: RunnerAnswer = { ok: false, refused: true, error: { message: "this runner is draining before its replacement" } };

// Runs one call with its token lent, until its deadline. Answering at the deadline ends this
// call's request context, and with it the call into the loaded isolate: timers it left behind
// (a setTimeout chain) are cancelled, and its itx and egress are gone (the token is taken back).
// Code that never yields is not stopped by this: the watchdog kills the process for it.
async function within(
  isolate: { id: string; variant: string },
  token: LentToken,
  timeoutMs: number,
  work: () => Promise<unknown>,
  direct?: DirectEgressVerdict,
): Promise<RunnerAnswer> {
  if (drainingSince !== undefined) return REFUSED;
  inFlight++;
  const { id, variant } = isolate;
  let held = lent.get(id);
  if (!held) lent.set(id, (held = { variant, tokens: new Map() }));
  const tokens = held.tokens;
  tokens.set(token, direct);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<RunnerAnswer>((done) => {
    timer = setTimeout(() => done({ ok: false, deadline: true, error: { code: "TIMEOUT", message: `ran past its ${timeoutMs} ms deadline and was stopped` } }), timeoutMs);
  });
  const answer = work().then(
    (value): RunnerAnswer => ({ ok: true, value }),
    (error: unknown): RunnerAnswer => {
      const { message, code } = (error ?? {}) as { message?: unknown; code?: unknown };
      return { ok: false, error: { message: typeof message === "string" ? message : String(error), ...(typeof code === "string" ? { code } : {}) } };
    },
  );
  try {
    const outcome = await Promise.race([answer, deadline]);
    if (!outcome.ok && "deadline" in outcome) beginDraining();
    return outcome;
  } finally {
    inFlight--;
    drainIfIdleAndRecycling();
    if (timer !== undefined) clearTimeout(timer);
    tokens.delete(token);
    if (tokens.size === 0) lent.delete(id);
  }
}

async function runScriptIn(env: RunnerEnv, load: RunnerLoad, itx: unknown, token: LentToken, timeoutMs: number, direct?: DirectEgressVerdict): Promise<RunnerAnswer> {
  if (drainingSince !== undefined) return REFUSED;
  const isolate = isolateIdOf(load);
  const worker = loadIsolate(env, { ...load, id: isolate.id });
  // oxlint-disable-next-line typescript/no-explicit-any -- the module is the OS's script module (script-module.ts)
  return within(isolate, token, timeoutMs, () => (worker.getEntrypoint() as any).run(itx), direct);
}

async function invokeIn(env: RunnerEnv, load: RunnerLoad, call: RunnerCall, token: LentToken, timeoutMs: number, direct?: DirectEgressVerdict): Promise<RunnerAnswer> {
  if (drainingSince !== undefined) return REFUSED;
  const facet = call.facet;
  if (facet) {
    const host = env.FACET_HOSTS.get(env.FACET_HOSTS.idFromName(facet.host));
    // A facet's isolate is loaded by its host under the load's own id: its calls are one variant.
    return within({ id: load.id, variant: load.variant ?? "" }, token, timeoutMs, () => host.invoke(load, call), direct);
  }
  const isolate = isolateIdOf(load);
  const entry = loadIsolate(env, { ...load, id: isolate.id }).getEntrypoint(call.entrypoint, call.props === undefined ? undefined : { props: call.props });
  return within(isolate, token, timeoutMs, async () => callMember(entry, call), direct);
}

function revokeVerdicts(floor: number): RunnerAnswer {
  // Also while draining: calls still in flight there hold verdicts too.
  verdicts.revoke(floor);
  return { ok: true, value: null };
}

function state(): "ready" | "draining" {
  return drainingSince === undefined ? "ready" : "draining";
}

export class RunnerEntrypoint extends WorkerEntrypoint<RunnerEnv> implements RunnerApi {
  async runScript(load: RunnerLoad, itx: unknown, token: LentToken, timeoutMs: number, direct?: DirectEgressVerdict): Promise<RunnerAnswer> {
    return runScriptIn(this.env, load, itx, token, timeoutMs, direct);
  }

  async revokeDirectEgress(floor: number): Promise<RunnerAnswer> {
    return revokeVerdicts(floor);
  }

  async invoke(load: RunnerLoad, call: RunnerCall, token: LentToken, timeoutMs: number, direct?: DirectEgressVerdict): Promise<RunnerAnswer> {
    return invokeIn(this.env, load, call, token, timeoutMs, direct);
  }

  ping(): "ready" | "draining" {
    return state();
  }

  session(watch: RunnerSessionWatch): RunnerSession {
    return new RunnerSession(this.env, watch.dup ? watch.dup() : watch);
  }
}

/**
 * The runner's calls over one connection that the OS keeps open (RunnerApi.session): a call on
 * the entrypoint costs the OS a connection of its own through the dev registry. The same calls,
 * with the same draining, deadlines and lent tokens. Held `watch` is let go when the OS disposes
 * the session, or with this process.
 */
export class RunnerSession extends RpcTarget implements RunnerCalls {
  readonly #env: RunnerEnv;
  readonly #watch: RunnerSessionWatch;

  constructor(env: RunnerEnv, watch: RunnerSessionWatch) {
    super();
    this.#env = env;
    this.#watch = watch;
    // The watch is a stub of the request that opened this session: only that request may call it.
    // The promise is made here, so a drain that begins in any other request resolves it and its
    // continuation still runs in this one (workerd's cross-request promise resolution).
    const { promise: told, resolve: tell } = Promise.withResolvers<void>();
    void told
      .then(() => watch.draining?.())
      .catch(() => undefined)
      .finally(() => unnoticed.delete(this));
    openSessions.set(this, tell);
    if (drainingSince !== undefined) {
      unnoticed.add(this);
      tell();
    }
  }

  async runScript(load: RunnerLoad, itx: unknown, token: LentToken, timeoutMs: number, direct?: DirectEgressVerdict): Promise<RunnerAnswer> {
    return runScriptIn(this.#env, load, itx, token, timeoutMs, direct);
  }

  async invoke(load: RunnerLoad, call: RunnerCall, token: LentToken, timeoutMs: number, direct?: DirectEgressVerdict): Promise<RunnerAnswer> {
    return invokeIn(this.#env, load, call, token, timeoutMs, direct);
  }

  async revokeDirectEgress(floor: number): Promise<RunnerAnswer> {
    return revokeVerdicts(floor);
  }

  ping(): "ready" | "draining" {
    return state();
  }

  [Symbol.dispose](): void {
    openSessions.delete(this);
    unnoticed.delete(this);
    this.#watch[Symbol.dispose]?.();
  }
}

/**
 * Hosts the facets of one context: its durable dynamic workers and durable source capabilities,
 * each a DurableObject class of loaded code with its own SQLite. They live here, in the runner's
 * process, so that code in them that never yields holds this process, not the OS; their storage
 * is the runner's persisted state, so a replaced runner finds it again.
 */
export class FacetHostDurableObject extends DurableObject<RunnerEnv> {
  // Which code each running facet was started from. A facet keeps its first class for as long as it
  // runs, so a call with other code (a new commit of the config repo) restarts it first: its
  // storage stays, its code is the new one.
  readonly #started = new Map<string, string>();

  async invoke(load: RunnerLoad, call: RunnerCall): Promise<unknown> {
    const facet = call.facet;
    if (!facet) throw new Error("a facet host calls facets only");
    const code = `${load.id}#${facet.className}`;
    const started = this.#started.get(facet.key);
    if (started !== undefined && started !== code) this.ctx.facets.abort(facet.key, new Error("its code changed"));
    this.#started.set(facet.key, code);
    const worker = loadIsolate(this.env, load);
    return callMember(this.ctx.facets.get(facet.key, () => ({ class: worker.getDurableObjectClass(facet.className) })), call);
  }
}

// Loads (or finds) the isolate `load` names. Its env.ITX and bare fetch() reach the OS with the
// token of the call in flight for its id, and with nothing once that call ended.
function loadIsolate(env: RunnerEnv, load: RunnerLoad): WorkerStub {
  return env.LOADER.get(load.id, () => ({
    compatibilityDate: load.compatibilityDate,
    mainModule: load.mainModule,
    modules: load.modules,
    env: load.itxBinding ? { ITX: loopback.ScopeItxEntrypoint({ props: { id: load.id } }) } : {},
    globalOutbound: loopback.ScopeEgressEntrypoint({ props: { id: load.id } }),
    limits: load.limits,
  }));
}

function callMember(target: unknown, call: RunnerCall): unknown {
  let parent: unknown = target;
  for (const segment of call.path.slice(0, -1)) parent = (parent as Record<string, unknown>)[segment];
  // Called as a method, never through Function.prototype.apply: on an RPC stub `apply` would be
  // one more remote property, and the stub itself would travel as an argument.
  return (parent as Record<string, ((...args: unknown[]) => unknown) | undefined>)[call.path.at(-1) ?? ""]?.(...call.args);
}

/** A loaded isolate's `env.ITX`: `get()` answers the itx its call in flight was lent. */
export class ScopeItxEntrypoint extends WorkerEntrypoint<RunnerEnv, { id: string }> {
  async get(): Promise<unknown> {
    return unwrapCallback(await this.env.OS.itx(tokenOf(this.ctx.props.id)));
  }
}

/** A loaded isolate's `globalOutbound`: its bare `fetch()` is its scope's egress, in the OS. */
export class ScopeEgressEntrypoint extends WorkerEntrypoint<RunnerEnv, { id: string }> {
  override async fetch(request: Request): Promise<Response> {
    const { id } = this.ctx.props;
    const token = tokenOf(id);
    const length = request.body === null ? 0 : Number(request.headers.get("content-length") ?? Number.NaN);
    // A stream pumped across the processes costs round trips of its own: small requests (most of
    // them carry no body) travel as bytes, and small answers come back the same way.
    if (!(length <= this.env.EGRESS_INLINE_MAX_BYTES)) return unwrapCallback(await this.env.OS.egress(token, request));
    // The length is the loaded code's word: a body longer than it takes the streaming road too.
    const read = request.body === null ? null : await smallBody(request.body, this.env.EGRESS_INLINE_MAX_BYTES);
    if (read instanceof ReadableStream) return unwrapCallback(await this.env.OS.egress(token, new Request(request.url, { method: request.method, headers: request.headers, body: read, redirect: request.redirect })));
    const body = read;
    // No shadow to consult and no secret to spend: the request leaves from here (direct-egress.ts).
    const { DIRECT_EGRESS_POLICY: policy, NETWORK: network } = this.env;
    if (policy !== undefined && network !== undefined && verdicts.allows(lent.get(id)?.tokens.values() ?? [], policy)) {
      const sent = await sendDirect(network, request, body, policy);
      if (sent) return sent;
    }
    const answer = unwrapCallback(await this.env.OS.egressInline(token, { url: request.url, method: request.method, headers: [...request.headers], body, redirect: request.redirect }));
    if ("response" in answer) return answer.response;
    const { status, statusText, headers, body: bytes } = answer.inline;
    return new Response(bytes, { status, statusText, headers });
  }
}

/** Whether `given` is the secret, compared in constant time (workerd's `timingSafeEqual`). */
function sameSecret(given: string, expected: string): boolean {
  const [a, b] = [new TextEncoder().encode(given), new TextEncoder().encode(expected)];
  return a.byteLength === b.byteLength && crypto.subtle.timingSafeEqual(a, b);
}

export default {
  async fetch(request: Request, env: RunnerEnv): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === "/health") {
      if (drained(env)) return new Response(`drained: ${drainReason}`, { status: 503 });
      return new Response(drainingSince === undefined ? "ok" : "draining");
    }
    // The watchdog asks a runner that grew too large to drain once it is idle, before it is replaced (RUNNER_RSS_RECYCLE_MB).
    if (pathname === "/drain" && request.method === "POST") {
      const token = env.CONTROL_TOKEN ?? "";
      if (token === "" || !sameSecret(request.headers.get("x-runner-control") ?? "", token)) return new Response("forbidden", { status: 403 });
      recycleReason ??= (await request.text()).slice(0, 200) || "the watchdog asked it to drain";
      drainIfIdleAndRecycling();
      return new Response(drainingSince === undefined ? "draining when idle" : "draining");
    }
    return new Response("the iterate runner: nothing to see here", { status: 404 });
  },
} satisfies ExportedHandler<RunnerEnv>;
