// How a secret placeholder is spelled. Imports nothing: the runner (loaded without a bundler)
// shares it, to tell requests that may carry one (those go through the OS's pipe) from the rest.

/** The word every placeholder begins with: `getSecret("/secrets/x")`. */
export const PLACEHOLDER_MARKER = "getSecret";

/**
 * A placeholder, also in its JSON-escaped form (getSecret(\"/secrets/x\")), as a header value
 * built from JSON text may spell it. Group 1 is the secret's path. Global: use with matchAll /
 * replace. The pipe looks for placeholders in header values only (egress-pipe.ts).
 */
export const PLACEHOLDER = new RegExp(`${PLACEHOLDER_MARKER}\\(\\s*\\\\?["'](\\/secrets\\/[A-Za-z0-9_.~/-]+)\\\\?["']\\s*\\)`, "g");
