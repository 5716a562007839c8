import { ItxError, errorMessage } from "../../errors/index.ts";
import type { StreamLimit } from "./limits.ts";

/** What an INVALID_ARGUMENT from stream validation says about where the input went wrong. */
export interface InvalidInputDetails {
  /** The limit that was crossed, when a limit was the reason. */
  limit?: StreamLimit;
  /** The position of the offending event in an append batch. */
  index?: number;
  /** The field that was wrong, e.g. `payload.items[3]`. */
  field?: string;
}

/** Builds the one error every stream validation failure throws. */
export function invalidInput(message: string, details: InvalidInputDetails = {}): ItxError {
  const where = details.index === undefined ? "" : `event ${details.index}: `;
  return new ItxError("INVALID_ARGUMENT", `${where}${message}`, { details: { ...details } });
}

/** Re-throws `error` with the batch position added, so a caller learns which event failed. */
export function atIndex(error: unknown, index: number): unknown {
  if (!(error instanceof ItxError) || error.code !== "INVALID_ARGUMENT") return error;
  const details = { ...error.details, index } as InvalidInputDetails;
  return invalidInput(errorMessage(error), details);
}
