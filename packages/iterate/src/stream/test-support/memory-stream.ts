import { ItxError } from "../../errors/index.ts";
import type { AppendOptions, EventInput, EventSource, StreamEvent } from "../../types.ts";
import {
  isPlainObject,
  matchesPayload,
  sameEventBody,
  validateAppendBatch,
  validateGetEventsInput,
  validateWaitForEventInput,
  type ValidEventInput,
  type ValidWaitForEventInput,
} from "../events/index.ts";
import type { ProcessorStream } from "../processor/host.ts";

/** An in-memory stream: the engine's ProcessorStream plus the reads, waits and live feed of the real one. */
export interface MemoryStream extends ProcessorStream {
  readonly path: string;
  /** The durable log, oldest first. */
  readonly events: readonly StreamEvent[];
  /** `append` with options: `expectedOffset` fails with OFFSET_CONFLICT unless it is the head. */
  appendWith(options: AppendOptions, ...inputs: EventInput[]): Promise<StreamEvent[]>;
  getEvents(input?: unknown): Promise<StreamEvent[]>;
  /** The first event after `afterOffset` matching type and payload, waiting up to `timeoutMs` (then TIMEOUT). */
  waitForEvent(input: unknown): Promise<StreamEvent>;
  /** Called with every committed batch, ephemeral events included; answers an unsubscribe function. */
  subscribe(callback: (events: StreamEvent[]) => void): () => void;
}

export interface MemoryStreamOptions {
  /** The stream's path; default "/". */
  path?: string;
  /** What the platform would stamp on every event (origin, principal, ...); only `processor` comes from the writer. */
  source?: EventSource;
  /** For createdAt; default Date.now. */
  now?: () => number;
}

interface Waiter {
  input: ValidWaitForEventInput;
  resolve(event: StreamEvent): void;
}

/**
 * An in-memory stream with the real stream's rules: the validation of `iterate/stream/events`,
 * idempotency (same key and body answers the stored event, a different body IDEMPOTENCY_CONFLICT),
 * `expectedOffset` (OFFSET_CONFLICT), and ephemeral events that reach subscribers but are never
 * stored. A refused append changes nothing. Stored events are frozen.
 *
 * @example
 * const stream = memoryStream();
 * await stream.append({ type: "demo/ping", idempotencyKey: "once" });
 * await stream.append({ type: "demo/ping", idempotencyKey: "once" }); // the same event, offset 1
 */
export function memoryStream(options: MemoryStreamOptions = {}): MemoryStream {
  const path = options.path ?? "/";
  const now = options.now ?? Date.now;
  const log: StreamEvent[] = [];
  const byKey = new Map<string, StreamEvent>();
  const subscribers = new Set<(events: StreamEvent[]) => void>();
  const waiters = new Set<Waiter>();

  const stamp = (input: ValidEventInput, offset: number): StreamEvent => {
    const source: EventSource = { ...options.source };
    if (input.source?.processor !== undefined) source.processor = input.source.processor;
    const event: StreamEvent = { streamPath: path, offset, type: input.type, payload: input.payload, createdAt: new Date(now()).toISOString(), source };
    if (input.idempotencyKey !== undefined) event.idempotencyKey = input.idempotencyKey;
    if (input.ephemeral === true) event.ephemeral = true;
    return deepFreeze(event);
  };

  const publish = (events: StreamEvent[]) => {
    for (const waiter of waiters) {
      const found = events.find((event) => matches(event, waiter.input));
      if (found !== undefined) waiter.resolve(found);
    }
    for (const callback of subscribers) {
      try {
        callback([...events]);
      } catch (error) {
        // A broken subscriber must not fail the writer's append; surface it on its own.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  };

  const appendWith = async (appendOptions: AppendOptions, ...inputs: EventInput[]): Promise<StreamEvent[]> => {
    const expectedOffset = checkAppendOptions(appendOptions);
    const valid = validateAppendBatch(inputs);
    // Resolve repeats first: nothing is written unless the whole batch can be.
    const pending = new Map<string, ValidEventInput>();
    const repeats = valid.map((input, index) => {
      const key = input.idempotencyKey;
      if (key === undefined) return undefined;
      const earlier = byKey.get(key) ?? pending.get(key);
      if (earlier === undefined) {
        pending.set(key, input);
        return undefined;
      }
      if (!sameEventBody(earlier, input)) {
        throw new ItxError("IDEMPOTENCY_CONFLICT", `idempotencyKey "${key}" was used for a different event`, {
          details: { index, idempotencyKey: key },
        });
      }
      return byKey.get(key) ?? key;
    });
    const writes = repeats.some((repeat) => repeat === undefined);
    const head = log.length;
    if (writes && expectedOffset !== undefined && expectedOffset !== head) {
      throw new ItxError("OFFSET_CONFLICT", `expected the head at ${expectedOffset}, but it is at ${head}`, {
        details: { expectedOffset, head },
      });
    }
    const fresh: StreamEvent[] = [];
    const result = valid.map((input, index) => {
      const repeat = repeats[index];
      if (typeof repeat === "object") return repeat;
      // A repeat of a key first used earlier in this same batch.
      if (typeof repeat === "string") return byKey.get(repeat) as StreamEvent;
      const event = stamp(input, input.ephemeral === true ? log.length : log.length + 1);
      if (event.ephemeral !== true) log.push(event);
      if (event.idempotencyKey !== undefined) byKey.set(event.idempotencyKey, event);
      fresh.push(event);
      return event;
    });
    if (fresh.length > 0) publish(fresh);
    return result;
  };

  return {
    path,
    get events() {
      return log;
    },
    append: (...inputs) => appendWith({}, ...inputs),
    appendWith,
    head: async () => log.length,
    read: async ({ afterOffset, limit }) => {
      const input = validateGetEventsInput({ afterOffset, limit });
      return log.slice(input.afterOffset, input.afterOffset + input.limit);
    },
    getEvents: async (raw) => {
      const input = validateGetEventsInput(raw);
      return log
        .slice(input.afterOffset, input.beforeOffset === undefined ? undefined : Math.max(input.afterOffset, input.beforeOffset - 1))
        .filter((event) => input.types === undefined || input.types.includes(event.type))
        .slice(0, input.limit);
    },
    waitForEvent: async (raw) => {
      const input = validateWaitForEventInput(raw);
      const found = log.find((event) => matches(event, input));
      if (found !== undefined) return found;
      return new Promise<StreamEvent>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new ItxError("TIMEOUT", `no matching event within ${input.timeoutMs} ms`, { details: { timeoutMs: input.timeoutMs } }));
        }, input.timeoutMs);
        const waiter: Waiter = {
          input,
          resolve: (event) => {
            clearTimeout(timer);
            waiters.delete(waiter);
            resolve(event);
          },
        };
        waiters.add(waiter);
      });
    },
    subscribe: (callback) => {
      subscribers.add(callback);
      return () => subscribers.delete(callback);
    },
  };
}

// An ephemeral event published while a wait is open is new to it, whatever offset it follows.
function matches(event: StreamEvent, input: ValidWaitForEventInput): boolean {
  return (
    (event.offset > input.afterOffset || event.ephemeral === true) &&
    (input.type === undefined || event.type === input.type) &&
    (input.payload === undefined || matchesPayload(event.payload, input.payload))
  );
}

function checkAppendOptions(options: unknown): number | undefined {
  if (!isPlainObject(options)) throw new ItxError("INVALID_ARGUMENT", "append options must be a plain object");
  for (const key of Object.keys(options)) {
    if (key !== "expectedOffset") {
      throw new ItxError("INVALID_ARGUMENT", `unknown append option "${key}"`, { details: { field: key } });
    }
  }
  const { expectedOffset } = options;
  if (expectedOffset === undefined) return undefined;
  if (typeof expectedOffset !== "number" || !Number.isSafeInteger(expectedOffset) || expectedOffset < 0) {
    throw new ItxError("INVALID_ARGUMENT", "expectedOffset must be a non-negative integer", { details: { field: "expectedOffset" } });
  }
  return expectedOffset;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
