import { errorCode, errorMessage } from "iterate/errors";

/** An error as the dashboard shows it: its code first (errors cross RPC with a string code). */
export function ErrorLine({ error }: { error: unknown }) {
  if (error === undefined) return null;
  return (
    <p className="error" role="alert" data-testid="error">
      <code>{errorCode(error) ?? "ERROR"}</code> {errorMessage(error)}
    </p>
  );
}
