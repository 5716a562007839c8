import { useCallback, useEffect, useState } from "react";
import { errorCode, errorMessage } from "iterate/errors";
import { ItxProvider, useDescribe, useItxBroken } from "iterate/react";
import type { SessionDescription } from "iterate/types";
import { signOut } from "./auth-client.ts";
import { ProjectPage } from "./project-page.tsx";
import { ProjectsPage } from "./projects-page.tsx";
import { useRoute, routeHref } from "./route.ts";
import { SignInPage } from "./sign-in-page.tsx";

/**
 * The dashboard: one Session over the session cookie for the whole page. Signing in opens a fresh
 * connection (a handshake carries the cookie it had when it was opened). The sign-in form lives
 * outside the connection, so it stays put (with what was typed) whatever the old one does.
 */
export function App() {
  const [generation, setGeneration] = useState(0);
  const [signedOut, setSignedOut] = useState<{ note: string | undefined } | undefined>(undefined);
  const reconnect = () => setGeneration((n) => n + 1);
  const showSignIn = useCallback((note: string | undefined) => setSignedOut((previous) => ({ note: note ?? previous?.note })), []);
  if (signedOut !== undefined) {
    const signedIn = () => {
      setSignedOut(undefined);
      reconnect();
    };
    return <SignInPage onSignedIn={signedIn} note={signedOut.note} />;
  }
  return (
    <ItxProvider key={generation}>
      <Gate reconnect={reconnect} showSignIn={showSignIn} />
    </ItxProvider>
  );
}

function Gate({ reconnect, showSignIn }: { reconnect(): void; showSignIn(note: string | undefined): void }) {
  const session = useDescribe<SessionDescription>();
  // The socket breaking is noticed at once, not at the next call: the OS closes it when the session
  // is signed out (in another tab too) or the token it was signed in with is revoked.
  const broken = useItxBroken();
  const failure = broken ?? (session.loading ? undefined : session.error);
  const unauthenticated = failure !== undefined && errorCode(failure) === "UNAUTHENTICATED";
  useEffect(() => {
    if (unauthenticated) showSignIn(signedOutNote(failure));
  }, [unauthenticated, failure, showSignIn]);
  if (unauthenticated) return null;
  if (failure !== undefined) return <Disconnected error={failure} reconnect={reconnect} />;
  if (session.loading || session.data === undefined) return <p className="muted pad">Connecting…</p>;
  return <Shell description={session.data} onSignOut={() => void signOut().finally(() => showSignIn(undefined))} />;
}

// What the sign-in form says when the OS ended a session that was open (not a page that never had one).
function signedOutNote(error: unknown): string | undefined {
  const ended = (error as { details?: { reason?: string } }).details?.reason === "revoked";
  return ended ? `Signed out: ${errorMessage(error)}` : undefined;
}

function Disconnected({ error, reconnect }: { error: unknown; reconnect(): void }) {
  return (
    <div className="pad" data-testid="disconnected">
      <p className="error" role="alert">
        <code>{errorCode(error) ?? "ERROR"}</code> {errorMessage(error)}
      </p>
      <button type="button" onClick={reconnect}>
        Reconnect
      </button>
    </div>
  );
}

function Shell({ description, onSignOut }: { description: SessionDescription; onSignOut(): void }) {
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
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main>{route.page === "projects" ? <ProjectsPage /> : <ProjectPage route={route} />}</main>
    </div>
  );
}
