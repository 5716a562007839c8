/**
 * The public contract of iterate: handwritten and import-free. Clients, scripts, loaded workers
 * and the platform program against these shapes. When prose and this file disagree, this file wins.
 * @module
 */

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** The codes an error can carry across RPC. See `iterate/errors` for the helpers that read them. */
export type ErrorCode =
  | "NOT_FOUND"
  | "UNAUTHENTICATED"
  | "INVALID_ARGUMENT"
  | "CAPABILITY_DISCONNECTED"
  | "IDEMPOTENCY_CONFLICT"
  | "OFFSET_CONFLICT"
  | "LOOP_LIMIT"
  | "EGRESS_REFUSED"
  | "SCRIPT_FAILED"
  | "TIMEOUT"
  | "PERMISSION_DENIED"
  | "LIMIT_EXCEEDED"
  | "UNAVAILABLE"
  | "INTERNAL";

/** What a coded error looks like after it crossed Cap'n Web. */
export interface CodedError extends Error {
  code: ErrorCode;
  details?: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// Authentication
// ---------------------------------------------------------------------------------------------

/** The deployment's admin secret: full authority over every project. */
export interface AdminSecretCredentials {
  type: "admin-secret";
  secret: string;
}

/** An OAuth access token issued for a user. */
export interface BearerCredentials {
  type: "bearer";
  token: string;
}

/**
 * Admin-gated: act as `principal` with access to exactly `projectIds`. Test suites use it to
 * exercise per-project confinement without minting real users.
 */
export interface ImpersonateCredentials {
  type: "impersonate";
  secret: string;
  principal: string;
  projectIds: string[];
}

/** A short-lived grant bound to one deployment (and usually one project). */
export interface OperatorSessionCredentials {
  type: "operator-session";
  token: string;
}

export type Credentials =
  | AdminSecretCredentials
  | BearerCredentials
  | ImpersonateCredentials
  | OperatorSessionCredentials;

/** Who a session acts as. Admins reach every project; others only their `projectIds`. */
export type Principal =
  | { kind: "admin"; id: "admin" }
  | { kind: "impersonated"; id: string; projectIds: string[] };

// ---------------------------------------------------------------------------------------------
// Discovery
// ---------------------------------------------------------------------------------------------

/** The envelope every node answers `__describe()` with; nodes add their own fields beside these. */
export interface Description {
  /** What kind of node this is: "unauthenticated", "session", "itx", ... */
  kind: string;
  /** Prose for whoever holds this node: what it is and how to use it. */
  instructions: string;
  /** One line per member, the map of what can be reached from here. */
  children: Record<string, string>;
  /** Where this node sits, when it has a parent. */
  parent?: string;
  /** TypeScript source describing the node, when it has one. */
  types?: string;
}

export interface SessionDescription extends Description {
  kind: "session";
  principal: Principal;
}

// ---------------------------------------------------------------------------------------------
// The object tree
// ---------------------------------------------------------------------------------------------

/** What `/api` exposes before authentication: nothing but `authenticate`. */
export interface UnauthenticatedRoot {
  /** Checks credentials once and hands back a Session. Fails with `UNAUTHENTICATED`. */
  authenticate(credentials: Credentials): Session;
}

/** A catalogue that vends project contexts. It is not itself a context. */
export interface Session {
  __describe(): SessionDescription;
  projects: ProjectCollection;
}

/** The projects a session can reach. */
export interface ProjectCollection {
  list(): ProjectSummary[];
  /** A handle on a project by slug or id; missing and forbidden both answer `NOT_FOUND`. */
  get(slugOrId: string): unknown;
  create(input: { slug: string }): unknown;
}

export interface ProjectSummary {
  id: string;
  slug: string;
}
