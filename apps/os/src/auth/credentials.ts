import { z } from "zod";
import type { Credentials } from "iterate/types";
import { ItxError } from "iterate/errors";
import { LIMITS } from "../limits.ts";

const secret = z.string().min(1, "must not be empty").max(LIMITS.CREDENTIAL_STRING_MAX_LENGTH);

const CredentialsSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("admin-secret"), secret }),
  z.strictObject({ type: z.literal("bearer"), token: secret }),
  z.strictObject({
    type: z.literal("impersonate"),
    secret,
    principal: z.string().min(1, "must not be empty").max(LIMITS.PRINCIPAL_ID_MAX_LENGTH),
    projectIds: z.array(z.string().min(1).max(LIMITS.PRINCIPAL_ID_MAX_LENGTH)).max(LIMITS.IMPERSONATED_PROJECT_IDS_MAX),
  }),
  z.strictObject({ type: z.literal("operator-session"), token: secret }),
  z.strictObject({ type: z.literal("session-cookie") }),
]);

const KNOWN_TYPES = ["admin-secret", "bearer", "impersonate", "operator-session", "session-cookie"];

/**
 * Validates untrusted credentials. Anything that is not exactly one of the documented shapes fails
 * with `UNAUTHENTICATED` and a message naming the first problem; secrets never appear in messages.
 */
export function parseCredentials(input: unknown): Credentials {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new ItxError(
      "UNAUTHENTICATED",
      `credentials must be an object like { type: "admin-secret", secret }, got ${describeType(input)}`,
      { details: { reason: "malformed" } },
    );
  }
  const type = (input as { type?: unknown }).type;
  if (typeof type !== "string" || !KNOWN_TYPES.includes(type)) {
    throw new ItxError(
      "UNAUTHENTICATED",
      `credentials.type must be one of ${KNOWN_TYPES.map((t) => `"${t}"`).join(", ")}, got ${typeof type === "string" ? JSON.stringify(type.slice(0, 64)) : describeType(type)}`,
      { details: { reason: "malformed" } },
    );
  }
  const parsed = CredentialsSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `credentials.${issue.path.join(".")}` : "credentials";
    const what = issue?.code === "unrecognized_keys" ? `has unknown field(s) ${issue.keys.join(", ")}` : (issue?.message ?? "is invalid");
    throw new ItxError("UNAUTHENTICATED", `${type} credentials are malformed: ${where} ${what}`, {
      details: { reason: "malformed" },
    });
  }
  return parsed.data;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value;
}
