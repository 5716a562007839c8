import { useEffect, useState, type FormEvent } from "react";
import { errorCode, errorMessage } from "iterate/errors";
import { signIn } from "./auth-client.ts";

/** Sign-in with the admin secret or a bearer token; the secret goes to /auth/sign-in and is forgotten. */
export function SignInPage({ onSignedIn, note }: { onSignedIn(): void; note: string | undefined }) {
  const [kind, setKind] = useState<"admin-secret" | "bearer">("admin-secret");
  const [value, setValue] = useState("");
  const [failure, setFailure] = useState<string | undefined>(note);
  const [busy, setBusy] = useState(false);
  // A note that arrives later (the OS said why the session ended) shows without clearing the form.
  useEffect(() => {
    if (note !== undefined) setFailure(note);
  }, [note]);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    try {
      await signIn(kind === "admin-secret" ? { type: "admin-secret", secret: value } : { type: "bearer", token: value });
      setValue("");
      onSignedIn();
    } catch (error) {
      setFailure(`${errorCode(error) ?? "ERROR"}: ${errorMessage(error)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="sign-in" onSubmit={(event) => void submit(event)}>
      <h1>iterate</h1>
      <label>
        Sign in with
        <select value={kind} onChange={(event) => setKind(event.target.value as typeof kind)}>
          <option value="admin-secret">the admin secret</option>
          <option value="bearer">a bearer token</option>
        </select>
      </label>
      <input
        name="secret"
        type="password"
        autoComplete="current-password"
        placeholder={kind === "admin-secret" ? "ITERATE_ADMIN_SECRET" : "itk_…"}
        value={value}
        onChange={(event) => setValue(event.target.value)}
        autoFocus
      />
      <button type="submit" disabled={busy || value === ""}>
        Sign in
      </button>
      {failure !== undefined && (
        <p className="error" role="alert">
          {failure}
        </p>
      )}
    </form>
  );
}
