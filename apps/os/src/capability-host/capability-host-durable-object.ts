import type { StreamEvent } from "iterate/types";
import { ItxError } from "iterate/errors";
import { StreamProcessorDurableObject } from "iterate/sdk";
import { answerCoded } from "../api/coded-result.ts";
import { BUILT_IN_NAMES } from "../itx/built-ins.ts";
import { isolateItx } from "../itx/itx-rpc-target.ts";
import { StreamRpcTarget, streamStub } from "../stream/stream-rpc-target.ts";
import { coordinateOfObject } from "../stream/coordinate.ts";
import { runScript } from "../worker-loader/run-script.ts";
import { builtLoad, loadBuilt } from "../worker-loader/dynamic-workers.ts";
import { LoadedWorkerRpcTarget } from "../worker-loader/loaded-worker-rpc-target.ts";
import type { BuiltWorker } from "../worker-loader/worker-build.ts";
import type { IsolateProps } from "../worker-loader/isolate-props.ts";
import { parseCallPath, pathKey } from "./capability-path.ts";
import type { Caller, CapabilityDescription, HostDescription, InvokeRequest, ProvideRequest } from "./capability-host-api.ts";
import { stampOf } from "./capability-host-api.ts";
import { dispatchToMount, notProvided, runnerFacet } from "./capability-dispatch.ts";
import { RunnerIsolateRpcTarget } from "../worker-loader/runner-isolate-rpc-target.ts";
import { HeldRunner } from "../worker-loader/runner-client.ts";
import { hostStub } from "./host-stub.ts";
import { directEgressVerdict, KeptVerdict, revokeDirectEgress, shadowsFetch } from "../egress/direct-egress-verdict.ts";
import { rowBytes, tableBytes } from "../limits/checkpoint-table.ts";
import { CAPABILITY_DISCONNECTED, CAPABILITY_PROVIDED, CAPABILITY_REVOKED, ItxCore, confinementOfState, longestProvidedPrefix, type ItxState, type Mount } from "./itx-contract.ts";
import type { Confinement } from "./jail.ts";
import { releaseLive, retainLive } from "./live-capability.ts";
import { mountPayload, parseProvideHeader } from "./provide-request.ts";
import { ChainResolution } from "./chain-resolution.ts";
import { LIMITS, limitDetails } from "../limits.ts";

/** An expected failure answered as a value (`hostStub` throws it again on the caller's side). */
type CodedFailure = { __itxCodedFailure: { code: string; message: string } };


interface LiveEntry {
  value: unknown;
  connectionId: string;
}

/**
 * One per context `{ projectId, path }`, named by the coordinate. Its capability table is the fold
 * of the context's own stream through the itx core contract (the checkpoint is a cache); live
 * capabilities' stubs are the only thing it holds that the stream does not, and they die with it.
 */
export class CapabilityHostDurableObject extends StreamProcessorDurableObject<Env> {
  // Enqueued runs execute in this context as whoever requested them (principal and origin), so
  // writing a request gives no more authority than running the script yourself.
  readonly processor = new ItxCore(async (run) => {
    if (run.origin === undefined) {
      return { status: "failed", error: { code: "PERMISSION_DENIED", message: "this run request does not say which context wrote it, so it is not run" } };
    }
    const confinement = await this.#confinementOf(run.origin);
    const props = { principal: run.principal, projectId: this.#projectId, origin: run.origin, path: this.#path, depth: 0, reaction: run.reaction };
    const scoped = confinement ? { ...props, confinement } : props;
    // The run is in this context: this host answers whether its chain shadows `fetch` itself, not
    // through a call to its own stub (a round trip on every enqueued run, an agent's turns among them).
    const direct = directEgressVerdict(this.env, scoped, (path) => this.provides(path));
    return runScript(this.env, scoped, isolateItx(this.env, scoped), run.script, { direct, held: this.#runner });
  });
  /** This object's open session into the runner (local OS only), for its enqueued runs and its calls on durable workers and sources: a Durable Object outlives its requests. */
  readonly #runner = new HeldRunner();
  readonly #projectId: string;
  readonly #path: string;
  readonly #live = new Map<number, LiveEntry>();
  readonly #chain: ChainResolution;
  /** Bytes of mount rows provided and not yet folded (see #provide). */
  #providing = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ({ projectId: this.#projectId, path: this.#path } = coordinateOfObject(ctx.id, "a capability host"));
    this.#chain = new ChainResolution(env, { projectId: this.#projectId, path: this.#path }, ctx.storage);
  }

  /** Mounts a capability at a path of this context: appends the fact, then folds it before answering. */
  provide(request: ProvideRequest): Promise<{ path: string[]; providedAtOffset: number; kind: Mount["kind"] } | CodedFailure> {
    return answerCoded(() => this.#provide(request));
  }

  async #provide(request: ProvideRequest): Promise<{ path: string[]; providedAtOffset: number; kind: Mount["kind"] }> {
    const header = parseProvideHeader(request, BUILT_IN_NAMES);
    const { path } = header;
    const state = await this.#state();
    this.#refuseOwnJailCode(state, request.caller);
    this.#refuseStrangers(state, request.caller, "provide on");
    if (header.special === "null" && this.#path === "/") throw new ItxError("INVALID_ARGUMENT", "the project's root context cannot be a jail");
    if (!state.mounts[pathKey(path)] && Object.keys(state.mounts).length >= LIMITS.MOUNTS_MAX) {
      throw new ItxError("INVALID_ARGUMENT", `a context holds at most ${LIMITS.MOUNTS_MAX} capabilities`, { details: limitDetails("MOUNTS_MAX") });
    }
    const { kind, payload } = mountPayload(header, request);
    // The table is part of this host's checkpoint (at most 1 MiB): a provide that would make it
    // larger than MOUNTS_MAX_BYTES, counting provides still on their way, is refused.
    const adding = mountRowBytes(pathKey(path), payload, request.caller);
    const held = tableBytes(state.mounts, pathKey(path)) + this.#providing;
    if (held + adding > LIMITS.MOUNTS_MAX_BYTES) {
      throw new ItxError("INVALID_ARGUMENT", `this context's capabilities would take ${held + adding} bytes, more than ${LIMITS.MOUNTS_MAX_BYTES}`, {
        details: limitDetails("MOUNTS_MAX_BYTES"),
      });
    }
    const kept = kind === "live" ? retainLive(request.capability) : undefined;
    this.#providing += adding;
    let event: StreamEvent | undefined;
    try {
      [event] = await this.#append(request.caller, { type: CAPABILITY_PROVIDED, payload });
    } finally {
      this.#providing -= adding;
    }
    if (!event) throw new ItxError("INTERNAL", "the stream answered no event for a provide");
    if (kind === "live") this.#live.set(event.offset, { value: kept, connectionId: request.caller.connectionId as string });
    // The provide replaced whatever was mounted at its path (its own value too, when a later
    // provide got there first): a live value kept for a mount no longer in the table is let go,
    // or it would keep its provider's stub, and this object in memory (`mayRelease`), for good.
    this.#forgetReplaced(await this.#state());
    // A new mount may shadow what descendants remember of the chain: they forget before we answer.
    await this.#chain.tellWatchers();
    // A new `fetch` shadow: runs that were told to send directly from the runner stop, before we answer.
    if (shadowsFetch(path)) await revokeDirectEgress(this.env);
    return { path, providedAtOffset: event.offset, kind };
  }

  /** Removes a mount (only the one provided at `providedAtOffset`, when given). Answers whether one was removed. */
  revoke(request: { path: unknown; providedAtOffset?: number; caller: Caller }): Promise<boolean | CodedFailure> {
    return answerCoded(() => this.#revoke(request));
  }

  async #revoke(request: { path: unknown; providedAtOffset?: number; caller: Caller }): Promise<boolean> {
    const path = parseCallPath(request.path);
    if (request.providedAtOffset !== undefined && !Number.isSafeInteger(request.providedAtOffset)) {
      throw new ItxError("INVALID_ARGUMENT", "providedAtOffset must be an integer");
    }
    const state = await this.#state();
    this.#refuseOwnJailCode(state, request.caller);
    this.#refuseStrangers(state, request.caller, "revoke on");
    const mount = state.mounts[pathKey(path)];
    if (!mount || (request.providedAtOffset !== undefined && mount.providedAtOffset !== request.providedAtOffset)) return false;
    const payload: Record<string, unknown> = { path, providedAtOffset: mount.providedAtOffset };
    await this.#append(request.caller, { type: CAPABILITY_REVOKED, payload });
    this.#forget(mount.providedAtOffset);
    return true;
  }

  /** The provider's connection closed: every live mount that came over it is now disconnected. */
  async disconnectConnection(connectionId: string): Promise<number> {
    const state = await this.#state();
    const gone = Object.values(state.mounts).filter(
      (mount) => mount.kind === "live" && mount.live?.connectionId === connectionId && !mount.disconnected,
    );
    if (gone.length === 0) return 0;
    await this.#append(
      { principal: "platform", origin: this.#path },
      ...gone.map((mount) => ({ type: CAPABILITY_DISCONNECTED, payload: { path: mount.path, providedAtOffset: mount.providedAtOffset } })),
    );
    for (const mount of gone) this.#forget(mount.providedAtOffset);
    return gone.length;
  }

  /**
   * Calls a capability. The longest provided prefix of the path in this table wins and gets the
   * remainder; a miss goes to the nearest ancestor that holds a prefix (see chain-resolution.ts).
   */
  invoke(request: InvokeRequest): Promise<unknown | CodedFailure> {
    return answerCoded(() => this.#invoke(request));
  }

  async #invoke(request: InvokeRequest): Promise<unknown> {
    const path = parseCallPath(request.path);
    if (path.length === 0) throw new ItxError("INVALID_ARGUMENT", "invoke needs a non-empty path");
    if (!Array.isArray(request.args)) throw new ItxError("INVALID_ARGUMENT", "args must be an array");
    const depth = request.depth ?? 0;
    if (depth >= LIMITS.CALL_DEPTH_MAX) {
      throw new ItxError("LOOP_LIMIT", `a call passed through ${LIMITS.CALL_DEPTH_MAX} capability hosts; it started at ${request.caller.origin}`);
    }
    const state = await this.#state();
    const hit = longestProvidedPrefix(state, path);
    if (request.http) {
      // Public HTTP reaches only mounts provided with http.expose, and only from this table.
      if (!hit || !hit.mount.http?.expose) throw notProvided(path, request.caller.origin);
      return this.#dispatch(hit.mount, hit.remainder, request.args as unknown[], request.caller, depth);
    }
    // A jail's null row answers every path nothing longer answers, and nothing falls through past it;
    // a built-in grant is reached on the handle, never by a call.
    if (hit && (hit.mount.kind === "null" || hit.mount.kind === "built-in")) throw notProvided(path, request.caller.origin);
    if (hit) return this.#dispatch(hit.mount, hit.remainder, request.args as unknown[], request.caller, depth);
    const ancestors = this.#ancestors(state);
    const next = { ...request, path, depth: depth + 1 };
    // One ancestor: asking it whether it holds the path would cost the same hop as the call.
    const owner = ancestors.length === 1 ? ancestors[0] : await this.#chain.ownerOf(path, ancestors);
    if (owner === undefined || owner === null) throw notProvided(path, request.caller.origin);
    return hostStub(this.env, this.#projectId, owner).invoke(next);
  }

  /**
   * A stateful dynamic worker: its DurableObject class as a facet of this context's object under
   * `key`, with its own SQLite. The same key reaches the same facet (and state) again.
   */
  durableWorker(input: { built: BuiltWorker; className: string; key: string; isolate: IsolateProps }): Promise<LoadedWorkerRpcTarget | RunnerIsolateRpcTarget | CodedFailure> {
    return answerCoded(() => this.#durableWorker(input));
  }

  async #durableWorker(input: { built: BuiltWorker; className: string; key: string; isolate: IsolateProps }): Promise<LoadedWorkerRpcTarget | RunnerIsolateRpcTarget> {
    // A facet lives on and acts as this context, so only code acting as this context may start or reach one.
    if (input.isolate.origin !== this.#path) {
      throw new ItxError("PERMISSION_DENIED", `a durable worker acts as ${this.#path}: reach it from code acting as that context, not from ${input.isolate.origin}`);
    }
    const { confinement: _theirs, ...isolate } = input.isolate;
    const confinement = confinementOfState(await this.#state(), this.#path);
    const props: IsolateProps = { ...isolate, origin: this.#path, path: this.#path, ...(confinement ? { confinement } : {}) };
    const key = `worker:${input.key}`;
    // Locally the facet lives in the runner process (decision 0007): code in it that never yields holds that process, not this one.
    if (this.env.RUNNER) {
      // Its fetches may leave from the runner while nothing on this context's chain shadows `fetch` (decision 0017).
      const direct = new KeptVerdict(() => directEgressVerdict(this.env, props, (path) => this.provides(path)));
      return new RunnerIsolateRpcTarget(this.env.RUNNER, builtLoad(input.built, props), { facet: runnerFacet(this.#projectId, this.#path, key, input.className) }, props, this.#runner, direct);
    }
    const worker = loadBuilt(this.env, input.built, props);
    return new LoadedWorkerRpcTarget(this.ctx.facets.get(key, () => ({ class: worker.getDurableObjectClass(input.className) })), props);
  }

  /**
   * Whether a call of `path` would find a mount here or on an ancestor: the cheap question a
   * default (egress's `fetch`) asks before it falls back, instead of a call that throws NOT_FOUND.
   */
  async provides(path: string[]): Promise<boolean> {
    const state = await this.#state();
    const hit = longestProvidedPrefix(state, path);
    if (hit) return hit.mount.kind !== "null" && hit.mount.kind !== "built-in";
    const ancestors = this.#ancestors(state);
    if (ancestors.length === 0) return false;
    return (await this.#chain.ownerOf(path, ancestors)) !== null;
  }

  /**
   * Whether this table alone holds a prefix of `path` (no delegation). A descendant that asks names
   * itself as `watcher` and is told to forget what it remembers when this table gains a mount.
   */
  async resolve(input: { path: string[]; watcher?: string }): Promise<{ held: boolean; watched: boolean }> {
    const held = longestProvidedPrefix(await this.#state(), input.path) !== undefined;
    const watched = input.watcher === undefined ? false : await this.#chain.watch(input.watcher);
    return { held, watched };
  }

  /** An ancestor gained a mount: what this context remembers of the chain may be stale. */
  forgetHints(): void {
    this.#chain.forgetAll();
  }

  /** This context's identity and its own mounts, from metadata only. */
  async describeOwn(): Promise<HostDescription> {
    const state = await this.#state();
    return {
      path: this.#path,
      name: state.born?.name ?? null,
      parent: state.born?.parent ?? (this.#path === "/" ? null : "/"),
      ancestors: this.#ancestors(state),
      capabilities: Object.values(state.mounts).map((mount) => this.#describeMount(mount)),
    };
  }

  /** What code running as this context may reach: its jail and grants, or null when it is no jail. */
  async confinement(): Promise<Confinement | null> {
    return confinementOfState(await this.#state(), this.#path) ?? null;
  }

  /** The whole inventory the chain gives this context: own mounts first, then each ancestor's (none past a jail's null row). */
  async describeChain(): Promise<HostDescription> {
    const own = await this.describeOwn();
    if (own.capabilities.some((capability) => capability.kind === "null")) return own;
    const inherited = await Promise.all(own.ancestors.map((ancestor) => hostStub(this.env, this.#projectId, ancestor).describeOwn()));
    const seen = new Set(own.capabilities.map((capability) => pathKey(capability.path)));
    const capabilities = [...own.capabilities];
    for (const description of inherited.toReversed()) {
      for (const capability of description.capabilities) {
        const key = pathKey(capability.path);
        capabilities.push(seen.has(key) ? { ...capability, shadowed: true } : capability);
        seen.add(key);
      }
    }
    return { ...own, capabilities };
  }

  /** The birth certificate, or what an unborn context defaults to. */
  async birth(): Promise<{ name: string | null; parent: string | null; ancestors: string[] }> {
    const state = await this.#state();
    return { name: state.born?.name ?? null, parent: state.born?.parent ?? (this.#path === "/" ? null : "/"), ancestors: this.#ancestors(state) };
  }

  // What a call needs of this host to reach one of its mounts (see capability-dispatch.ts).
  #dispatch(mount: Mount, remainder: string[], args: unknown[], caller: Caller, depth: number): Promise<unknown> {
    return dispatchToMount(
      {
        env: this.env,
        projectId: this.#projectId,
        path: this.#path,
        live: (offset) => this.#live.get(offset),
        connectionLost: (connectionId) => this.ctx.waitUntil(this.disconnectConnection(connectionId).catch(() => 0)),
        confinementOf: (origin) => this.#confinementOf(origin),
        facets: this.ctx.facets,
        runner: this.#runner,
      },
      mount,
      remainder,
      args,
      caller,
      depth,
    );
  }

  // Code acting as `origin` is confined when that context is a jail (looked up on its own host).
  async #confinementOf(origin: string): Promise<Confinement | undefined> {
    if (origin === "/") return undefined;
    if (origin === this.#path) return confinementOfState(await this.#state(), this.#path);
    return (await hostStub(this.env, this.#projectId, origin).confinement()) ?? undefined;
  }

  // Authority flows down the tree: code acting as this context or one of its ancestors may change
  // its rows (a mount runs code as, or in the name of, whoever calls it here); a sibling may not.
  #refuseStrangers(state: ItxState, caller: Caller, what: string): void {
    if (caller.origin === this.#path || this.#ancestors(state).includes(caller.origin)) return;
    throw new ItxError("PERMISSION_DENIED", `code acting as ${caller.origin} cannot ${what} ${this.#path}: only the context itself and its ancestors can`, {
      details: { reason: "not-an-ancestor" },
    });
  }

  // A jail's own code never changes its rows: only code acting as another context does.
  #refuseOwnJailCode(state: ItxState, caller: Caller): void {
    if (caller.origin === this.#path && confinementOfState(state, this.#path)) {
      throw new ItxError("PERMISSION_DENIED", `${this.#path} is a jail: its own code cannot change its rows; change them from outside, e.g. itx.cd("${this.#path}")`);
    }
  }

  #describeMount(mount: Mount): CapabilityDescription {
    const description: CapabilityDescription = {
      path: mount.path,
      kind: mount.kind,
      scope: this.#path,
      connected: mount.kind !== "live" || (!mount.disconnected && this.#live.has(mount.providedAtOffset)),
      providedAtOffset: mount.providedAtOffset,
    };
    if (mount.instructions !== undefined) description.instructions = mount.instructions;
    if (mount.types !== undefined) description.types = mount.types;
    return description;
  }

  #ancestors(state: ItxState): string[] {
    if (state.born) return state.born.ancestors;
    return this.#path === "/" ? [] : ["/"];
  }

  #forgetReplaced(state: ItxState): void {
    const mounted = new Set<number>();
    for (const mount of Object.values(state.mounts)) if (mount.kind === "live") mounted.add(mount.providedAtOffset);
    for (const offset of this.#live.keys()) if (!mounted.has(offset)) this.#forget(offset);
  }

  #forget(providedAtOffset: number): void {
    const entry = this.#live.get(providedAtOffset);
    if (!entry) return;
    this.#live.delete(providedAtOffset);
    releaseLive(entry.value);
  }

  async #append(caller: Caller, ...events: Array<{ type: string; payload: unknown }>): Promise<StreamEvent[]> {
    await this.#wake();
    const stream = new StreamRpcTarget(streamStub(this.env.STREAM, `${this.#projectId}:${this.#path}`), { ...stampOf(caller), platform: "capability-host" });
    const written = await stream.append(...events);
    await this.ingest(written);
    return written;
  }

  async #state(): Promise<ItxState> {
    await this.#wake();
    return (await this.snapshot()).state as ItxState;
  }

  // A host is woken by its stream's delivery, or here, on first use in this incarnation.
  async #wake(): Promise<void> {
    if (this.woken) return;
    await this.wakeStreamProcessor({ name: "core", stream: this.openStream(), coordinate: `${this.#projectId}:${this.#path}` });
  }

  protected override openStream(): StreamRpcTarget {
    return new StreamRpcTarget(streamStub(this.env.STREAM, `${this.#projectId}:${this.#path}`), { platform: "capability-host" });
  }

  // Live capabilities are values only this incarnation holds: while one is mounted, the stream's
  // session keeps this object in memory.
  protected override mayRelease(): boolean {
    return this.#live.size === 0;
  }
}

export type { Caller };

/** The bytes of the row a provide of `payload` by `caller` will fold to (see ItxCore's CAPABILITY_PROVIDED). */
function mountRowBytes(key: string, payload: Record<string, unknown>, caller: Caller): number {
  return rowBytes(key, { ...payload, providedAtOffset: Number.MAX_SAFE_INTEGER, disconnected: false, provider: { principal: caller.principal, origin: caller.origin } });
}
