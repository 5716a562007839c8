import type { BackgroundClaim } from "../../types.ts";
import type { ProcessorCheckpoint } from "../processor/checkpoint.ts";
import { checkpointKey, claimPrefix, type ProcessorStorage } from "../processor/host.ts";

/** In-memory ProcessorStorage with ways for a test to look inside and to break things. */
export interface MemoryStorage extends ProcessorStorage {
  /** A copy of every entry. */
  entries(): Map<string, unknown>;
  /** Every key written, in order, once per put: count commits with it. */
  readonly puts: readonly string[];
  /** Every delete, in order, and whether it let the host's output go on without waiting for it. */
  readonly deletes: ReadonlyArray<{ key: string; allowUnconfirmed: boolean }>;
  /** How many times a processor's checkpoint was written. */
  checkpointWrites(slug: string): number;
  checkpoint(slug: string): ProcessorCheckpoint | undefined;
  /** Deletes a processor's checkpoint, as an operator resetting its state would. */
  deleteCheckpoint(slug: string): boolean;
  claims(slug: string): BackgroundClaim[];
}

/**
 * Storage in a Map. Values are structured-cloned on the way in and out, as a Durable Object's
 * storage does, so that a processor cannot change a committed checkpoint by mutating its state.
 *
 * @example
 * const storage = memoryStorage();
 * const engine = new ProcessorEngine({ stream, storage, processors: [new Counter()] });
 * storage.checkpointWrites("counter"); // commits so far
 */
export function memoryStorage(): MemoryStorage {
  const data = new Map<string, unknown>();
  const puts: string[] = [];
  const deletes: Array<{ key: string; allowUnconfirmed: boolean }> = [];
  const byPrefix = (prefix: string) =>
    new Map(
      [...data.entries()]
        .filter(([key]) => key.startsWith(prefix))
        .toSorted(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, value]) => [key, structuredClone(value)]),
    );
  return {
    get: async (key) => structuredClone(data.get(key)),
    put: async (key, value) => {
      data.set(key, structuredClone(value));
      puts.push(key);
    },
    delete: async (key, options) => {
      deletes.push({ key, allowUnconfirmed: options?.allowUnconfirmed === true });
      return data.delete(key);
    },
    list: async ({ prefix }) => byPrefix(prefix),
    entries: () => byPrefix(""),
    puts,
    deletes,
    checkpointWrites: (slug) => puts.filter((key) => key === checkpointKey(slug)).length,
    checkpoint: (slug) => structuredClone(data.get(checkpointKey(slug))) as ProcessorCheckpoint | undefined,
    deleteCheckpoint: (slug) => data.delete(checkpointKey(slug)),
    claims: (slug) => [...byPrefix(claimPrefix(slug)).values()] as BackgroundClaim[],
  };
}
