// Which secret materials the pipe substituted for a scope, so that what loaded code answers (a
// run's result, a dynamic worker's return value, a thrown message) can be scrubbed of them.
//
// A scope is a project and the context whose code sent the request: exactly what the pipe knows
// of it (its EgressScope), minus the principal, because a durable worker's facet keeps the
// egress of whoever started it while any principal may call it. Every road out of loaded code (a
// bare fetch through EgressEntrypoint or the runner's callbacks, itx.fetch on its handle) ends in
// the pipe of this Worker isolate, where the record lives.
//
// Two records, both scrubbed of, never one instead of the other:
// - a watch: what was substituted while one run or call was in progress. Never forgotten while
//   it lasts; past RUN_MATERIALS_MAX the run's result is withheld.
// - the scope's recent record: what was substituted for the scope in the last RECENT_MATERIALS_MS,
//   watched or not. Isolates are reused across runs and calls of the same code and scope, so code
//   can keep material in a global during a call that used it and return it from a later call
//   that used none; the recent record scrubs that later result too. Past RECENT_MATERIALS_MAX
//   distinct materials in the window the scope's results are withheld until the window has
//   passed; past RECENT_MATERIALS_MAX_CHARS across scopes the least recently used scope is
//   forgotten (its watches still hold).
// Another run in the same scope may add its materials to either record: a result is then
// scrubbed of more than it used, never less.

import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";

export interface MaterialScope {
  projectId: string;
  origin: string;
}

/** What a scope has used lately, as `materialsInPlay` answers it. */
export interface MaterialsInPlay {
  /** Materials substituted for the scope within RECENT_MATERIALS_MS. */
  materials: readonly string[];
  /** Set past RECENT_MATERIALS_MAX: the scope's results are withheld until the window has passed. */
  overflowed: boolean;
  /** Changes whenever a material is added or the scope overflows: a cheap "anything new?". */
  version: number;
}

export interface MaterialWatch {
  /** The materials substituted for the scope since the watch began, and those it used lately. */
  materials(): string[];
  /** Throws LIMIT_EXCEEDED past RUN_MATERIALS_MAX materials in the watch or RECENT_MATERIALS_MAX in the scope's window. */
  assertWithinLimit(): void;
  end(): void;
}

interface Watch {
  materials: Set<string>;
  overflowed: boolean;
}

interface Recent {
  /** Material → when it was last substituted (ms). */
  used: Map<string, number>;
  overflowedUntil: number;
  version: number;
  chars: number;
}

const watches = new Map<string, Set<Watch>>();
// Least recently used first: a scope is moved to the end whenever the pipe notes a material for it.
const recent = new Map<string, Recent>();
let recentChars = 0;
let versions = 0;

/** The record's key for a scope. Compute it once for many lookups (a stream's chunks). */
export function materialKey(scope: MaterialScope): string {
  return JSON.stringify([scope.projectId, scope.origin]);
}

/** Starts recording the materials the pipe substitutes for `scope`. End it when the run settles. */
export function watchMaterials(scope: MaterialScope): MaterialWatch {
  const key = materialKey(scope);
  const watch: Watch = { materials: new Set(), overflowed: false };
  let set = watches.get(key);
  if (!set) watches.set(key, (set = new Set()));
  set.add(watch);
  return {
    materials() {
      const lately = materialsInPlay(key);
      if (!lately) return [...watch.materials];
      if (watch.materials.size === 0) return [...lately.materials];
      return [...new Set([...watch.materials, ...lately.materials])];
    },
    assertWithinLimit() {
      if (watch.overflowed) {
        throw new ItxError("LIMIT_EXCEEDED", `the code used more than ${LIMITS.RUN_MATERIALS_MAX} secrets; its result is withheld`, {
          details: limitDetails("RUN_MATERIALS_MAX"),
        });
      }
      if (materialsInPlay(key)?.overflowed) throw recentOverflow();
    },
    end() {
      const current = watches.get(key);
      current?.delete(watch);
      if (current?.size === 0) watches.delete(key);
    },
  };
}

/** The refusal for a result of a scope past RECENT_MATERIALS_MAX. */
export function recentOverflow(): ItxError {
  const minutes = Math.round(LIMITS.RECENT_MATERIALS_MS / 60_000);
  return new ItxError("LIMIT_EXCEEDED", `this context's code used more than ${LIMITS.RECENT_MATERIALS_MAX} secrets in ${minutes} minutes; its results are withheld until then`, {
    details: limitDetails("RECENT_MATERIALS_MAX"),
  });
}

/**
 * What the scope (or its key, from `materialKey`) used within RECENT_MATERIALS_MS; undefined when
 * nothing. One map lookup when the scope has used no material: the fast path of every result.
 */
export function materialsInPlay(scope: MaterialScope | string, now = Date.now()): MaterialsInPlay | undefined {
  const key = typeof scope === "string" ? scope : materialKey(scope);
  const entry = recent.get(key);
  if (!entry) return undefined;
  prune(key, entry, now);
  if (!recent.has(key)) return undefined;
  return { materials: [...entry.used.keys()], overflowed: entry.overflowedUntil > now, version: entry.version };
}

/** Called by the pipe with the materials it substituted into one request for `scope`. */
export function noteMaterialsUsed(scope: MaterialScope, materials: Iterable<string>, now = Date.now()): void {
  const key = materialKey(scope);
  const list = [...materials];
  const set = watches.get(key);
  for (const watch of set ?? []) {
    for (const material of list) {
      if (watch.materials.has(material)) continue;
      if (watch.materials.size >= LIMITS.RUN_MATERIALS_MAX) watch.overflowed = true;
      else watch.materials.add(material);
    }
  }
  remember(key, list, now);
}

function remember(key: string, materials: string[], now: number): void {
  let entry = recent.get(key);
  if (entry) {
    prune(key, entry, now);
    entry = recent.get(key);
  }
  if (!entry) {
    entry = { used: new Map(), overflowedUntil: 0, version: ++versions, chars: key.length };
    recentChars += entry.chars;
  }
  // Most recently used last.
  recent.delete(key);
  recent.set(key, entry);
  for (const material of materials) {
    if (entry.used.has(material)) {
      entry.used.set(material, now);
      continue;
    }
    if (entry.used.size >= LIMITS.RECENT_MATERIALS_MAX) {
      entry.overflowedUntil = now + LIMITS.RECENT_MATERIALS_MS;
      entry.version = ++versions;
      continue;
    }
    entry.used.set(material, now);
    entry.chars += material.length;
    recentChars += material.length;
    entry.version = ++versions;
  }
  // Forget the least recently used scopes, never the one just noted.
  for (const [oldest, old] of recent) {
    if (recentChars <= LIMITS.RECENT_MATERIALS_MAX_CHARS || oldest === key) break;
    forget(oldest, old);
  }
}

function prune(key: string, entry: Recent, now: number): void {
  const cutoff = now - LIMITS.RECENT_MATERIALS_MS;
  for (const [material, at] of entry.used) {
    if (at > cutoff) continue;
    entry.used.delete(material);
    entry.chars -= material.length;
    recentChars -= material.length;
  }
  if (entry.used.size === 0 && entry.overflowedUntil <= now) forget(key, entry);
}

function forget(key: string, entry: Recent): void {
  recent.delete(key);
  recentChars -= entry.chars;
}

/** Runs being watched now (for tests). */
export function watchedScopes(): number {
  return watches.size;
}

/** Scopes with a recent record, and the characters it holds (for tests). */
export function recentRecordSize(): { scopes: number; chars: number } {
  return { scopes: recent.size, chars: recentChars };
}
