import { RpcTarget } from "cloudflare:workers";
import { RESERVED_PATH_SEGMENTS } from "../capability-host/capability-path.ts";

/** What a class with the fallback must offer: one explicit dispatch for any path. */
export interface InvokesCapabilities {
  invokeCapability(input: { path: string[]; args: unknown[] }): Promise<unknown>;
}

/**
 * Makes every property a class does not define a path proxy: `itx.slack.chat.postMessage(x)`
 * becomes one `invokeCapability({ path: ["slack", "chat", "postMessage"], args: [x] })`. The
 * fallback sits on the prototype chain (not in a Proxy around each instance), so instances stay
 * genuine RpcTargets that Cap'n Web and Workers RPC pass by reference and pipeline on. Reserved
 * names never become paths.
 */
export function installInvokeFallback(target: abstract new (...args: never[]) => InvokesCapabilities): void {
  const base = Object.create(RpcTarget.prototype) as object;
  const fallback = new Proxy(base, {
    get(object, property, receiver) {
      if (typeof property !== "string" || property in object || RESERVED_PATH_SEGMENTS.has(property)) {
        return Reflect.get(object, property, receiver);
      }
      return pathProxy(receiver as InvokesCapabilities, [property]);
    },
  });
  Object.setPrototypeOf(target.prototype, fallback);
}

const callable = () => undefined;

/**
 * A callable that accumulates property names and, when called, invokes the whole path once
 * (`[]` when the proxy itself is called). Cap'n Web and Workers RPC walk a pipelined path with
 * hasOwn + [] on functions, so both are answered. Disposing the root (path `[]`) disposes `owner`.
 */
export function pathProxy(owner: InvokesCapabilities & Partial<Disposable>, path: string[]): unknown {
  return new Proxy(callable, {
    get(fn, property) {
      if (property === Symbol.dispose && path.length === 0 && owner[Symbol.dispose]) return () => owner[Symbol.dispose]?.();
      if (typeof property !== "string") return Reflect.get(fn, property);
      if (RESERVED_PATH_SEGMENTS.has(property)) return undefined;
      return pathProxy(owner, [...path, property]);
    },
    getOwnPropertyDescriptor(fn, property) {
      if (typeof property !== "string" || RESERVED_PATH_SEGMENTS.has(property)) return Reflect.getOwnPropertyDescriptor(fn, property);
      if (property === "length" || property === "name") return Reflect.getOwnPropertyDescriptor(fn, property);
      return { value: pathProxy(owner, [...path, property]), configurable: true, enumerable: true, writable: false };
    },
    apply(_fn, _this, args) {
      return owner.invokeCapability({ path, args });
    },
  });
}
