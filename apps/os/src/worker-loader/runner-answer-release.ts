import { RpcStub } from "cloudflare:workers";

// What one call into the runner holds until its answer is disposed. workerd keeps a call's result
// pipeline, and on the RUNNER binding (another process, through the dev registry) the connection
// the call opened, until the answer's `Symbol.dispose` runs or the request that made the call ends.
// A Cap'n Web connection or a Durable Object is one request that lives long, so without this every
// call held two file descriptors (one in each process) and the runner kept each call's pipeline:
// about 10,000 worker calls over one connection exhausted the OS's descriptors.

/**
 * Lets go of what the runner's `answer` holds on its connection, once the caller has it. Stubs
 * and functions in the answer's value live on that connection: each is replaced by a duplicate of
 * its own first (`dup()`), which keeps the connection for as long as the duplicate lives, and no
 * longer. Plain data, errors, and Responses or streams (their bodies flow on without the answer)
 * need nothing kept. An answer whose stubs cannot be re-seated (a stub as a Map key or Set member,
 * or inside a class instance) is left as it is: it is let go with its request.
 */
export function releaseAnswer(answer: unknown): void {
  if (typeof answer !== "object" || answer === null) return;
  const dispose = (answer as Partial<Disposable>)[Symbol.dispose];
  if (typeof dispose !== "function") return;
  if (!reseatStubs(answer)) return;
  try {
    dispose.call(answer);
  } catch {
    // Already let go.
  }
}

// Replaces every stub and function reachable through arrays, plain objects and Map values with
// its duplicate. False when one is somewhere it cannot be replaced.
function reseatStubs(root: object): boolean {
  const seen = new Set<object>();
  const pending: object[] = [root];
  for (let container = pending.pop(); container !== undefined; container = pending.pop()) {
    if (seen.has(container)) continue;
    seen.add(container);
    if (Array.isArray(container) || isPlainObject(container)) {
      const record = container as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        const item = record[key];
        if (isLive(item)) {
          const copy = duplicate(item);
          if (copy === undefined) return false;
          record[key] = copy;
        } else if (typeof item === "object" && item !== null) pending.push(item);
      }
    } else if (container instanceof Map) {
      for (const [key, item] of container) {
        if (isLive(key)) return false;
        if (typeof key === "object" && key !== null) pending.push(key);
        if (isLive(item)) {
          const copy = duplicate(item);
          if (copy === undefined) return false;
          container.set(key, copy);
        } else if (typeof item === "object" && item !== null) pending.push(item);
      }
    } else if (container instanceof Set) {
      for (const item of container) {
        if (isLive(item)) return false;
        if (typeof item === "object" && item !== null) pending.push(item);
      }
    } else if (!(container instanceof Error || container instanceof Response || container instanceof Request || container instanceof ReadableStream || ArrayBuffer.isView(container) || container instanceof ArrayBuffer || container instanceof Date || container instanceof RegExp)) {
      // A class instance the walk does not know: it might hold stubs where they cannot be re-seated.
      return false;
    }
  }
  return true;
}

// Typed loosely: RpcStub's own type is too deep for the checker to narrow with.
const STUB_CLASS = RpcStub as unknown as abstract new (...args: never[]) => object;

function isLive(value: unknown): value is object {
  return typeof value === "function" || (typeof value === "object" && value !== null && value instanceof STUB_CLASS);
}

function duplicate(stub: object): unknown {
  const dup = (stub as { dup?: unknown }).dup;
  return typeof dup === "function" ? (dup as () => unknown).call(stub) : undefined;
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
