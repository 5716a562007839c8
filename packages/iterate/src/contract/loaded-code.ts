// Loaded code: what code the platform loads reaches, over Workers RPC. Part of the contract of record (types.ts).
import type { Itx } from "./itx.ts";

/**
 * `T` reached over Workers RPC: every method answers a promise that can be called through before
 * it settles (pipelining), and so does every property.
 */
export type Remote<T> = {
  readonly [K in keyof T]: T[K] extends (...args: infer A) => infer R
    ? (...args: A) => Pipelined<R>
    : T[K] extends object
      ? Remote<T[K]>
      : Pipelined<T[K]>;
};

/** What an RPC call answers: await it for the value, or call through it without waiting. Disposable. */
export type Pipelined<T> = Promise<Awaited<T>> & Disposable & (T extends object ? Remote<T> : unknown);

/**
 * What `this.getItx()` answers in code the platform loads: the itx of the context the code was
 * loaded for. Bind it with `using` in the smallest block that holds its calls; leaving the block
 * releases the scope and every handle awaited through it.
 */
export type ItxScope = Pipelined<Itx>;

/** `env.ITX` in code the platform loads: `get()` answers the isolate's itx. */
export interface ItxBinding {
  get(): ItxScope;
}

/** The env the platform gives code it loads (dynamic workers, source capabilities, their facets). */
export interface ItxEnv {
  ITX: ItxBinding;
}
