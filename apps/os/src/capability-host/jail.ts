import { ItxError } from "iterate/errors";
import { parseProvidedPath, pathKey } from "./capability-path.ts";

/**
 * Jails. A context whose own table holds the bare row `[] ⇒ null` (provided as
 * `provideCapability({ path: [], capability: null })`) is a jail: every path of its itx resolves
 * to that null unless a row beside it (a grant) is longer. Code running as the jail (scripts,
 * workers and source capabilities whose origin is the jail) reaches only what is granted: the
 * jail's own mounts, and the built-ins granted by rows `{ name, capability: { type: "built-in" } }`.
 * Nothing falls through to the jail's ancestors. A bare jail is closed both ways: its code appends
 * nowhere, and the jail's stream refuses every writer but the platform; granting `append` opens it
 * to writers. The jail's own code can never change its rows.
 */

/**
 * The built-in names a row is checked against: those no mount may take, and those a jail may be
 * granted (everything else: cd, streams, extend, run, agents, secrets, ... stays out of reach).
 * Derived from the table in itx/built-ins.ts, which callers pass in.
 */
export interface BuiltInNames {
  reserved: ReadonlySet<string>;
  grantable: ReadonlySet<string>;
}

/** The table key of the jail row. */
export const JAIL_ROW_KEY = pathKey([]);

/** What code running as a context may reach: nothing to say (not a jail), or only its grants. */
export interface Confinement {
  /** The jail's path. */
  jail: string;
  /** The built-ins granted beside the null row. */
  grants: string[];
}

/** A `{ type: "built-in" }` capability: a grant of the built-in named by the row's path. */
export function isBuiltInGrant(capability: unknown): boolean {
  return (
    typeof capability === "object" &&
    capability !== null &&
    (capability as { type?: unknown }).type === "built-in" &&
    Object.keys(capability).length === 1
  );
}

/**
 * The path and kind of a row from what a provider passed: the jail row, a built-in grant, or an
 * ordinary mount (whose path rules are parseProvidedPath's).
 */
export function parseRow(input: { name?: unknown; path?: unknown }, capability: unknown, builtIns: BuiltInNames): { path: string[]; special?: "null" | "built-in" } {
  if (capability === null) {
    if (input.name !== undefined || !Array.isArray(input.path) || input.path.length !== 0) {
      throw new ItxError("INVALID_ARGUMENT", "null is provided only as the jail row: provideCapability({ path: [], capability: null })");
    }
    return { path: [], special: "null" };
  }
  if (isBuiltInGrant(capability)) {
    const path = input.name !== undefined ? [input.name] : input.path;
    const name = Array.isArray(path) && path.length === 1 ? path[0] : undefined;
    if (typeof name !== "string" || !builtIns.grantable.has(name)) {
      throw new ItxError("INVALID_ARGUMENT", `a built-in grant names one of ${[...builtIns.grantable].join(", ")}`);
    }
    return { path: [name], special: "built-in" };
  }
  return { path: parseProvidedPath(input, builtIns.reserved) };
}

/** The refusal for a built-in that code in a jail was not granted: it looks like nothing is there. */
export function notGranted(member: string, jail: string): ItxError {
  return new ItxError("NOT_FOUND", `itx.${member} is not granted to code running in the jail ${jail}`, { details: { jail, member } });
}
