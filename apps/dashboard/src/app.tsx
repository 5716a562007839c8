import { useState } from "react";
import { errorCode, errorMessage } from "iterate/errors";
import { ItxProvider, useDescribe, useItxBroken } from "iterate/react";
import type { SessionDescription } from "iterate/types";
import { signOut } from "./auth-client.ts";
import { ProjectPage } from "./project-page.tsx";
import { ProjectsPage } from "./projects-page.tsx";
import { useRoute, routeHref } from "./route.ts";
import { SignInPage } from "./sign-in-page.tsx";

/**
 * The dashboard: one Session over the session cookie for the whole page. Signing in or out
 * opens a fresh connection (a handshake carries the cookie it had when it was opened).
 */
export function App() {
  const [generation, setGeneration] = useState(0);
  const reconnect = () => setGeneration((n) => n + 1);
  return (
    <ItxProvider key={generation}>
      <Gate reconnect={reconnect} />
    </ItxProvider>
  );
}

function Gate({ reconnect }: { reconnect(): void }) {
  const session = useDescribe<SessionDescription>();
  // The socket breaking is noticed at once, not at the next call: the OS closes it when the session
  // is signed out (in another tab too) or the token it was signed in with is revoked.
  const broken = useItxBroken();
  if (broken !== undefined) return <Broken error={broken} reconnect={reconnect} />;
  if (session.loading) return <p className="muted pad">Connecting…</p>;
  if (session.error !== undefined || session.data === undefined) {
    const code = errorCode(session.error);
    const note = code === "UNAUTHENTICATED" ? undefined : `${code ?? "ERROR"}: ${errorMessage(session.error)}`;
    return <SignInPage onSignedIn={reconnect} note={note} />;
  }
  return <Shell description={session.data} reconnect={reconnect} />;
}

function Broken({ error, reconnect }: { error: unknown; reconnect(): void }) {
  const code = errorCode(error);
  if (code === "UNAUTHENTICATED") {
    const ended = (error as { details?: { reason?: string } }).details?.reason === "revoked";
    return <SignInPage onSignedIn={reconnect} note={ended ? `Signed out: ${errorMessage(error)}` : undefined} />;
  }
  return (
    <div className="pad" data-testid="disconnected">
      <p className="error" role="alert">
        <code>{code ?? "ERROR"}</code> {errorMessage(error)}
      </p>
      <button type="button" onClick={reconnect}>
        Reconnect
      </button>
    </div>
  );
}

function Shell({ description, reconnect }: { description: SessionDescription; reconnect(): void }) {
  const route = useRoute();
  const { principal } = description;
  return (
    <div className="shell">
      <header>
        <a className="brand" href={routeHref({ page: "projects" })}>
          iterate
        </a>
        {route.page === "project" && <span className="crumb">/ {route.slug}</span>}
        <span className="spacer" />
        <span className="muted" data-testid="principal">
          {principal.kind === "admin" ? "admin" : principal.id}
        </span>
        <button type="button" onClick={() => void signOut().finally(reconnect)}>
          Sign out
        </button>
      </header>
      <main>{route.page === "projects" ? <ProjectsPage /> : <ProjectPage route={route} />}</main>
    </div>
  );
}
