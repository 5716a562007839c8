import { ItxError } from "iterate/errors";
import type { ProvideRequest } from "./capability-host-api.ts";
import { parseExpression } from "./expression.ts";
import { type Mount } from "./itx-contract.ts";
import { parseRow, type BuiltInNames } from "./jail.ts";
import { liveShapeOf } from "./live-capability.ts";
import { parseSourceAddress } from "./source-capability.ts";
import { LIMITS, limitDetails, type LimitName } from "../limits.ts";

// What a provide asks for, parsed before the capability host looks at its table: the row's path
// and kind, and the payload of its itx/capability-provided fact. The host checks who may change
// its table between the two steps, and keeps a live value's stub itself.

/** The row a provide names and the texts that describe it. */
export interface ProvideHeader {
  path: string[];
  special?: "null" | "built-in";
  instructions?: string;
  types?: string;
}

export function parseProvideHeader(request: ProvideRequest, builtIns: BuiltInNames): ProvideHeader {
  const row = parseRow({ path: request.path }, request.capability, builtIns);
  const instructions = optionalText(request.instructions, "instructions", LIMITS.INSTRUCTIONS_MAX_LENGTH, "INSTRUCTIONS_MAX_LENGTH");
  const types = optionalText(request.types, "types", LIMITS.TYPES_MAX_LENGTH, "TYPES_MAX_LENGTH");
  return { ...row, ...(instructions === undefined ? {} : { instructions }), ...(types === undefined ? {} : { types }) };
}

/**
 * The mount's kind and the payload of its fact: an expression or source recipe is stored whole; a
 * live value is stored as its shape and the connection it came over (the value itself is not).
 */
export function mountPayload(header: ProvideHeader, request: ProvideRequest): { kind: Mount["kind"]; payload: Record<string, unknown> } {
  const { path, special } = header;
  const expression = special ? undefined : parseExpression(request.capability, path);
  const source = !special && isSourceAddress(request.capability) ? parseSourceAddress(request.capability) : undefined;
  const kind: Mount["kind"] = special ?? (expression ? "itx-expression" : source ? "source" : "live");
  const payload: Record<string, unknown> = { path, kind };
  if (header.instructions !== undefined) payload.instructions = header.instructions;
  if (header.types !== undefined) payload.types = header.types;
  if (request.http !== undefined) payload.http = parseHttp(request.http);
  if (special) {
    // The jail row and built-in grants hold nothing but their kind.
  } else if (expression) {
    payload.expression = expression;
  } else if (source) {
    payload.source = source;
  } else {
    const connectionId = request.caller.connectionId;
    if (connectionId === undefined) throw new ItxError("INVALID_ARGUMENT", "a live capability needs a live connection to come over");
    payload.live = { shape: liveShapeOf(request.capability), connectionId };
  }
  return { kind, payload };
}

function isSourceAddress(capability: unknown): capability is Record<string, unknown> {
  return typeof capability === "object" && capability !== null && (capability as { type?: unknown }).type === "rpc";
}

function parseHttp(http: unknown): { expose: boolean } {
  const expose = (http as { expose?: unknown } | null)?.expose;
  if (typeof http !== "object" || http === null || typeof expose !== "boolean" || Object.keys(http).length !== 1) {
    throw new ItxError("INVALID_ARGUMENT", "http is { expose: boolean }");
  }
  return { expose };
}

function optionalText(value: unknown, field: string, max: number, limit: LimitName): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new ItxError("INVALID_ARGUMENT", `${field} must be a string`);
  if (value.length > max) throw new ItxError("INVALID_ARGUMENT", `${field} is at most ${max} characters`, { details: limitDetails(limit) });
  return value;
}
