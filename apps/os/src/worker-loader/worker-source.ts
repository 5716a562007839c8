import { ItxError } from "iterate/errors";
import { LIMITS, limitDetails } from "../limits.ts";

/** A dynamic worker's source as callers give it: untrusted until `parseWorkerSource` accepted it. */
export interface WorkerSource {
  /** Paths relative to the project root, TypeScript included. */
  files: Record<string, string>;
  /** The entry file; by default the bundler looks for src/index.ts and its usual neighbours. */
  entryPoint?: string;
}

/**
 * Checks a worker's source against the named limits (WORKER_FILES_MAX, WORKER_SOURCE_MAX_BYTES)
 * and its shape; INVALID_ARGUMENT otherwise. Both the OS (before it asks for a build) and the
 * bundler Worker (which trusts nobody's input, the OS's included) run it.
 */
export function parseWorkerSource(source: unknown): WorkerSource {
  if (typeof source !== "object" || source === null) throw new ItxError("INVALID_ARGUMENT", "source is { files: { path: code }, entryPoint? }");
  const { files, entryPoint, ...rest } = source as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `source has no field(s) ${Object.keys(rest).join(", ")}`);
  if (typeof files !== "object" || files === null || Array.isArray(files)) throw new ItxError("INVALID_ARGUMENT", "source.files maps paths to code");
  const entries = Object.entries(files);
  if (entries.length === 0 || entries.length > LIMITS.WORKER_FILES_MAX) {
    throw new ItxError("INVALID_ARGUMENT", `source has 1-${LIMITS.WORKER_FILES_MAX} files`, { details: limitDetails("WORKER_FILES_MAX") });
  }
  let bytes = 0;
  for (const [path, code] of entries) {
    if (typeof code !== "string") throw new ItxError("INVALID_ARGUMENT", `source.files[${JSON.stringify(path)}] must be a string`);
    if (path.startsWith("/") || path.split("/").includes("..")) throw new ItxError("INVALID_ARGUMENT", `file path ${JSON.stringify(path)} must be relative`);
    bytes += code.length;
  }
  if (bytes > LIMITS.WORKER_SOURCE_MAX_BYTES) {
    throw new ItxError("INVALID_ARGUMENT", `source is at most ${LIMITS.WORKER_SOURCE_MAX_BYTES} bytes`, { details: limitDetails("WORKER_SOURCE_MAX_BYTES") });
  }
  if (entryPoint !== undefined && (typeof entryPoint !== "string" || !(entryPoint in files))) {
    throw new ItxError("INVALID_ARGUMENT", `entryPoint must name one of the files`);
  }
  return entryPoint === undefined ? { files: files as Record<string, string> } : { files: files as Record<string, string>, entryPoint };
}
