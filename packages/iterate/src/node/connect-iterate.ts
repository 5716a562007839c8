import { connectItx, type ConnectOptions } from "../client/connect-itx.ts";
import type { Credentials } from "../types.ts";

/** An open connection to an OS: its Session, closed when the connection is disposed. */
export interface IterateConnection extends Disposable {
  // oxlint-disable-next-line typescript/no-explicit-any -- the Session stub is dynamic over RPC
  readonly session: any;
  close(): void;
}

/**
 * Connects from Node and owns the connection: `session` is the authenticated Session, and
 * disposing the connection (or `close()`) ends it, which disconnects every live capability
 * provided over it. Providers that reconnect provide their capabilities again.
 *
 * @example
 * using connection = await connectIterate({ baseUrl, auth: { type: "bearer", token } });
 * using project = connection.session.projects.get("my-project");
 * console.log(await project.whoami());
 */
export async function connectIterate(options: ConnectOptions & { auth: Credentials }): Promise<IterateConnection> {
  const session = connectItx(options);
  await session.__describe(); // fail here, with UNAUTHENTICATED, rather than at first use
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    session[Symbol.dispose]();
  };
  return { session, close, [Symbol.dispose]: close };
}
