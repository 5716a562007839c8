import { createContext, createElement, useContext, useEffect, useState, type ReactNode } from "react";
import { connectItx } from "../client/connect-itx.ts";
import { ItxError } from "../errors/index.ts";
import type { Credentials } from "../types.ts";

// oxlint-disable typescript/no-explicit-any -- handles are capnweb stubs: dynamic by design

/** What the provider shares: a Session, a project's Itx or an agent's, as a capnweb stub. */
// oxlint-disable-next-line typescript/no-explicit-any
export type AnyHandle = any;

const ItxContext = createContext<AnyHandle | undefined>(undefined);

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
  useEffect(() => {
    if (itx !== undefined) return undefined;
    const origin = baseUrl ?? globalThis.location?.origin;
    if (origin === undefined) throw new ItxError("INVALID_ARGUMENT", "ItxProvider needs baseUrl outside a browser page");
    const session = connectItx({ baseUrl: origin, auth: (JSON.parse(authKey) as Credentials | null) ?? { type: "session-cookie" } });
    setOwned(() => session);
    return () => {
      setOwned(undefined);
      session[Symbol.dispose]();
    };
  }, [itx, baseUrl, authKey]);
  const value = itx ?? owned;
  if (value === undefined) return null;
  return createElement(ItxContext.Provider, { value }, props.children);
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
