import { createContext, createElement, useContext, useEffect, useState, type ReactNode } from "react";
import { connectItx } from "../client/connect-itx.ts";
import { ItxError } from "../errors/index.ts";
import type { Credentials } from "../types.ts";

// oxlint-disable typescript/no-explicit-any -- handles are capnweb stubs: dynamic by design

/** What the provider shares: a Session, a project's Itx or an agent's, as a capnweb stub. */
// oxlint-disable-next-line typescript/no-explicit-any
export type AnyHandle = any;

const ItxContext = createContext<AnyHandle | undefined>(undefined);
// What broke the nearest owning provider's handle; `undefined` while it works.
const BrokenContext = createContext<unknown>(undefined);

export interface ItxProviderProps {
  /**
   * The handle to share: a Session, `session.projects.get(slug)`, an agent's itx. Nested providers
   * narrow: a project page wraps its children in `<ItxProvider itx={session.projects.get(slug)}>`.
   * The provider does not dispose a handle it was given.
   */
  itx?: AnyHandle;
  /** Without `itx`: the OS to connect to (default: the page's own origin). */
  baseUrl?: string;
  /** Without `itx`: credentials (default `{ type: "session-cookie" }`, the browser's same-origin lane). */
  auth?: Credentials;
  children?: ReactNode;
}

/**
 * Shares an iterate handle with the components below it. Given no `itx`, it opens a Session
 * with `connectItx` (by default with the browser's session cookie, so no secret sits in page
 * script) and closes it on unmount.
 *
 * @example
 * import { ItxProvider } from "iterate/react";
 * createRoot(el).render(<ItxProvider><App /></ItxProvider>);
 */
export function ItxProvider(props: ItxProviderProps): ReactNode {
  const { itx, baseUrl, auth } = props;
  const authKey = JSON.stringify(auth ?? null);
  const [owned, setOwned] = useState<AnyHandle | undefined>(undefined);
  const [broken, setBroken] = useState<unknown>(undefined);
  const inheritedBroken = useContext(BrokenContext);
  useEffect(() => {
    if (itx !== undefined) return undefined;
    const origin = baseUrl ?? globalThis.location?.origin;
    if (origin === undefined) throw new ItxError("INVALID_ARGUMENT", "ItxProvider needs baseUrl outside a browser page");
    let active = true;
    const session = connectItx({ baseUrl: origin, auth: (JSON.parse(authKey) as Credentials | null) ?? { type: "session-cookie" } });
    // The OS closing the socket (sign-out elsewhere, a revoked token) breaks every stub of the
    // session at once: report it now, not at the next call a component happens to make.
    session.onRpcBroken((error: unknown) => {
      if (active) setBroken(() => error ?? new ItxError("UNAVAILABLE", `the connection to ${origin} closed`));
    });
    setOwned(() => session);
    setBroken(undefined);
    return () => {
      active = false;
      setOwned(undefined);
      session[Symbol.dispose]();
    };
  }, [itx, baseUrl, authKey]);
  const value = itx ?? owned;
  if (value === undefined) return null;
  const content = createElement(ItxContext.Provider, { value }, props.children);
  return itx !== undefined ? content : createElement(BrokenContext.Provider, { value: broken ?? inheritedBroken }, content);
}

/**
 * What broke the handle of the nearest provider that opened its own connection, or `undefined`
 * while it works. It changes the moment the handle breaks, without any call: authentication
 * refused (`UNAUTHENTICATED`), the OS ending the session because it was signed out or its token
 * revoked (`UNAUTHENTICATED`, `details.reason: "revoked"`), or the connection dropping
 * (`UNAVAILABLE`). A broken handle stays broken: remount the provider (a new `key`) to reconnect.
 *
 * @example
 * const broken = useItxBroken();
 * if (errorCode(broken) === "UNAUTHENTICATED") return <SignIn />;
 */
export function useItxBroken(): unknown {
  return useContext(BrokenContext);
}

/**
 * The nearest `ItxProvider`'s handle: call anything on it (`await useItx().whoami()`).
 * Throws outside a provider.
 */
export function useItx(): AnyHandle {
  const itx = useContext(ItxContext);
  if (itx === undefined) throw new ItxError("INVALID_ARGUMENT", "useItx() needs an <ItxProvider> above this component");
  return itx;
}

/** The state of one asynchronous read. */
export interface AsyncState<T> {
  data: T | undefined;
  /** The error as thrown; read its `code` (errors cross RPC as Errors with a string code). */
  error: unknown;
  loading: boolean;
}
