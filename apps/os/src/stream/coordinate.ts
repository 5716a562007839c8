import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";

/** The project id of deployment-wide streams (admin only): they belong to no project. */
export const DEPLOYMENT_PROJECT_ID = "__null__";


// A path is "/" or "/seg/seg" with segments of letters, digits and . _ - ~ (no empty segments,
// no "." or "..": a path names one place, whoever spells it).
const SEGMENT = /^[A-Za-z0-9_~-][A-Za-z0-9._~-]*$/;

/** A stream's identity: the project it belongs to and its path there. */
export interface StreamCoordinate {
  projectId: string;
  path: string;
}

/** Validates a stream path and answers it unchanged, or throws INVALID_ARGUMENT. */
export function parseStreamPath(path: unknown): string {
  if (typeof path !== "string") throw new ItxError("INVALID_ARGUMENT", `a stream path must be a string, got ${typeof path}`);
  if (path.length > LIMITS.STREAM_PATH_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", `a stream path is at most ${LIMITS.STREAM_PATH_MAX_LENGTH} characters`, {
      details: limitDetails("STREAM_PATH_MAX_LENGTH"),
    });
  }
  if (path === "/") return path;
  if (!path.startsWith("/") || path.endsWith("/")) {
    throw new ItxError("INVALID_ARGUMENT", `a stream path starts with "/" and does not end with one, got ${JSON.stringify(path)}`);
  }
  for (const segment of path.slice(1).split("/")) {
    if (!SEGMENT.test(segment) || segment === "." || segment === "..") {
      throw new ItxError("INVALID_ARGUMENT", `stream path segment ${JSON.stringify(segment)} is not allowed in ${JSON.stringify(path)}`);
    }
  }
  return path;
}

/**
 * The coordinate a Durable Object is named by (`<projectId>:<path>`): every per-stream, per-context
 * and per-secret object is addressed this way. `what` names the object in the error.
 */
export function coordinateOfObject(id: DurableObjectId, what: string): StreamCoordinate {
  const name = id.name ?? "";
  const colon = name.indexOf(":");
  if (colon <= 0) throw new Error(`${what} must be addressed by its coordinate name`);
  return { projectId: name.slice(0, colon), path: name.slice(colon + 1) };
}

/** The Durable Object name of a stream: `<projectId>:<path>`. */
export function coordinateName({ projectId, path }: StreamCoordinate): string {
  return `${projectId}:${path}`;
}
