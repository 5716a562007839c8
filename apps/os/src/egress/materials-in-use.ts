// Which secret materials the pipe substituted while a script ran, so that what the script returns
// (or throws) can be scrubbed of them before it is stored in run-settled or answered.
//
// A run is watched by its scope: the project, origin context and principal its isolate acts as,
// which is exactly what the pipe knows of a request (its EgressScope). Both roads out of a script
// (a bare fetch through EgressEntrypoint, and itx.fetch on the handle it was given) end in the
// pipe of this Worker isolate, where the watch lives. Another run in the same scope at the same
// time may add its materials to the watch: the result is then scrubbed of more than it used,
// never less. Nothing is kept when no run is watching.

import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";


export interface MaterialScope {
  projectId: string;
  origin: string;
  principal: string;
}

export interface MaterialWatch {
  /** The materials substituted for the scope since the watch began. */
  materials(): string[];
  /** Throws LIMIT_EXCEEDED when the run used more than LIMITS.RUN_MATERIALS_MAX materials. */
  assertWithinLimit(): void;
  end(): void;
}

interface Watch {
  materials: Set<string>;
  overflowed: boolean;
}

const watches = new Map<string, Set<Watch>>();

function keyOf(scope: MaterialScope): string {
  return JSON.stringify([scope.projectId, scope.origin, scope.principal]);
}

/** Starts recording the materials the pipe substitutes for `scope`. End it when the run settles. */
export function watchMaterials(scope: MaterialScope): MaterialWatch {
  const key = keyOf(scope);
  const watch: Watch = { materials: new Set(), overflowed: false };
  let set = watches.get(key);
  if (!set) watches.set(key, (set = new Set()));
  set.add(watch);
  return {
    materials: () => [...watch.materials],
    assertWithinLimit() {
      if (watch.overflowed) {
        throw new ItxError("LIMIT_EXCEEDED", `the run used more than ${LIMITS.RUN_MATERIALS_MAX} secrets; its result is withheld`, {
          details: limitDetails("RUN_MATERIALS_MAX"),
        });
      }
    },
    end() {
      const current = watches.get(key);
      current?.delete(watch);
      if (current?.size === 0) watches.delete(key);
    },
  };
}

/** Called by the pipe with the materials it substituted into one request for `scope`. */
export function noteMaterialsUsed(scope: MaterialScope, materials: Iterable<string>): void {
  const set = watches.get(keyOf(scope));
  if (!set) return;
  for (const watch of set) {
    for (const material of materials) {
      if (watch.materials.has(material)) continue;
      if (watch.materials.size >= LIMITS.RUN_MATERIALS_MAX) watch.overflowed = true;
      else watch.materials.add(material);
    }
  }
}

/** Runs being watched now (for tests). */
export function watchedScopes(): number {
  return watches.size;
}
