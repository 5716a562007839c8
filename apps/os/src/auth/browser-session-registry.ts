import type { Principal } from "iterate/types";
import { coordinateName, DEPLOYMENT_PROJECT_ID } from "../stream/coordinate.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";
import { AUTH_WRITER } from "./token-registry.ts";
import { watchEnd as watchStreamEnd } from "./watch-end.ts";

/**
 * The deployment's record of browser sessions (the cookie lane): `auth/browser-session-started`
 * and `auth/browser-session-ended` facts on the deployment-wide stream /browser-sessions
 * (platform-only types, see stream/write-authority.ts). The cookie names a session; the session's
 * principal lives here, never in the cookie. Each session also has a stream of its own,
 * /browser-sessions/<id>, where its open connections listen for sign-out.
 */
export const BROWSER_SESSION_STARTED = "events.iterate.com/auth/browser-session-started";
export const BROWSER_SESSION_ENDED = "events.iterate.com/auth/browser-session-ended";

/** What sign-in recorded about a browser session. */
export interface BrowserSessionRecord {
  sessionId: string;
  principal: Principal;
  /** The bearer token signed in with, when it was one: revoking it ends the session too. */
  token?: { tokenId: string; expiresAt: number };
  expiresAt: number;
}

const REGISTRY = coordinateName({ projectId: DEPLOYMENT_PROJECT_ID, path: "/browser-sessions" });

export async function recordStarted(env: Env, record: BrowserSessionRecord): Promise<void> {
  await registry(env).append({
    events: [{ type: BROWSER_SESSION_STARTED, payload: record, idempotencyKey: `auth/browser-session-started:${record.sessionId}` }],
    stamp: { principal: record.principal.id, platform: AUTH_WRITER },
  });
}

/** Ends a session (once): its cookie no longer authenticates and its open connections close. */
export async function recordEnded(env: Env, sessionId: string, by: string): Promise<void> {
  const fact = { type: BROWSER_SESSION_ENDED, payload: { sessionId }, idempotencyKey: `auth/browser-session-ended:${sessionId}` };
  const stamp = { principal: by, platform: AUTH_WRITER };
  await registry(env).append({ events: [fact], stamp });
  await sessionStream(env, sessionId).append({ events: [fact], stamp });
}

/** The live record of a session, or undefined when it was never started here or has ended. */
export async function liveSession(env: Env, sessionId: string): Promise<BrowserSessionRecord | undefined> {
  const [started, ended] = await Promise.all([
    registry(env).getByIdempotencyKey(`auth/browser-session-started:${sessionId}`),
    registry(env).getByIdempotencyKey(`auth/browser-session-ended:${sessionId}`),
  ]);
  if (ended !== null && ended.type === BROWSER_SESSION_ENDED && ended.source.platform === AUTH_WRITER) return undefined;
  if (started === null || started.type !== BROWSER_SESSION_STARTED || started.source.platform !== AUTH_WRITER) return undefined;
  return started.payload as BrowserSessionRecord;
}

/**
 * Calls `close` when the session ends (sign-out), for as long as the connection lasts. A session
 * with too many open connections (LIVE_SUBSCRIBERS_MAX) is refused another.
 */
export function watchEnd(env: Env, sessionId: string, key: string, close: () => void): Promise<() => void> {
  const tooMany = "this browser session has as many open connections as one session may have (LIVE_SUBSCRIBERS_MAX); close a tab first";
  return watchStreamEnd(sessionStream(env, sessionId), { key, endType: BROWSER_SESSION_ENDED, writer: AUTH_WRITER, tooMany }, close);
}

function registry(env: Env) {
  return streamStub(env.STREAM, REGISTRY);
}

function sessionStream(env: Env, sessionId: string) {
  return streamStub(env.STREAM, coordinateName({ projectId: DEPLOYMENT_PROJECT_ID, path: `/browser-sessions/${sessionId}` }));
}
