// Authentication and the object tree: credentials, the session and the projects it reaches. Part of the contract of record (types.ts).
import type { Description } from "./discovery.ts";
import type { Itx } from "./itx.ts";
import type { Repos } from "./repos.ts";
import type { Stream } from "./streams.ts";

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

/**
 * The browser's same-origin lane: authenticates with the session cookie that `POST /auth/sign-in`
 * set, sent by the browser on the WebSocket handshake. Page script never holds a secret.
 */
export interface SessionCookieCredentials {
  type: "session-cookie";
}

export type Credentials =
  | AdminSecretCredentials
  | BearerCredentials
  | ImpersonateCredentials
  | OperatorSessionCredentials
  | SessionCookieCredentials;

/** Who a session acts as. Admins reach every project; others only their `projectIds`. */
export type Principal =
  | { kind: "admin"; id: "admin" }
  | { kind: "impersonated"; id: string; projectIds: string[] };

export interface SessionDescription extends Description {
  kind: "session";
  principal: Principal;
}

/** What `/api` exposes before authentication: nothing but `authenticate`. */
export interface UnauthenticatedRoot {
  /** Checks credentials once and hands back a Session. Fails with `UNAUTHENTICATED`. */
  authenticate(credentials: Credentials): Session;
}

/** A freshly issued bearer token: the text is shown only here. */
export interface IssuedTokenAnswer {
  token: string;
  tokenId: string;
  expiresInSeconds: number;
}

/** What the deployment records of an issued token (never its text). */
export interface IssuedToken {
  tokenId: string;
  principal: string;
  projectIds: string[];
  /** Epoch seconds. */
  expiresAt: number;
  issuedAt: string;
  revokedAt?: string;
}

/** `session.tokens` (admin only). A revoked token fails at its next authenticate, and sessions open with it end. */
export interface Tokens {
  issue(input: { principal: string; projectIds: string[]; ttlSeconds?: number }): IssuedTokenAnswer;
  list(): IssuedToken[];
  revoke(tokenId: string): { revoked: boolean };
}

/** A catalogue that vends project contexts. It is not itself a context. */
export interface Session {
  __describe(): SessionDescription;
  projects: ProjectCollection;
  /** Admin only: a bearer token acting as `principal` with exactly `projectIds`, ids or slugs (for `withItx`). Same as `tokens.issue`. */
  issueToken(input: { principal: string; projectIds: string[]; ttlSeconds?: number }): IssuedTokenAnswer;
  /** Admin only: issue, list and revoke bearer tokens one by one. */
  tokens: Tokens;
  /** Admin only: deployment-wide streams that belong to no project. Others get NOT_FOUND. */
  streams: StreamCollection;
  /** Admin only: deployment-wide repositories that belong to no project. Others get NOT_FOUND. */
  repos: Repos;
}

export interface StreamCollection {
  /** The stream at `path` ("/" or "/a/b"); it exists from its first append. */
  get(path: string): Stream;
}

/** The projects a session can reach. */
export interface ProjectCollection {
  list(): ProjectSummary[];
  /**
   * A handle on a project's root context by slug or id. Nothing is created: calls on a missing
   * (or forbidden: the two are indistinguishable) project fail with NOT_FOUND until `create()`.
   */
  get(slugOrId: string): ProjectRoot;
  /**
   * Creates a project (slug: lowercase kebab-case, 2-63 characters, unique) and answers its root
   * context once `project/created` landed; `waitUntilCreated: false` answers as soon as the
   * request is recorded (the root stream shows each step as it lands).
   */
  create(input: { slug: string; waitUntilCreated?: boolean }): Itx;
}

/** What `projects.get` answers: the root context plus `create()`. */
export interface ProjectRoot extends Itx {
  /** Creates the project, or finishes a creation that stopped part-way; `created` is false when it did not wait. */
  create(input?: { waitUntilCreated?: boolean }): { created: boolean };
}

export interface ProjectSummary {
  id: string;
  slug: string;
}
