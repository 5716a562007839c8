import { ItxError } from "iterate/errors";

/** The Durable Object binding that hosts config-repo processors (listed in PROCESSOR_HOST_BINDINGS). */
export const USER_PROCESSOR_BINDING = "USER_PROCESSOR";

/** Subscription rows of config-repo processors are keyed `processor:<key>` in their stream's table. */
export const USER_PROCESSOR_ROW_PREFIX = "processor:";

/** A subscription key: kebab-case, as a contract slug (it is the name the stream wakes the host with). */
const KEY = /^[a-z][a-z0-9-]{0,63}$/;
/** An exported class name of the config worker. */
const CLASS_NAME = /^[A-Za-z_$][A-Za-z0-9_$]{0,127}$/;

/** Which processor folds which stream: one host (and one facet with its own state) per address. */
export interface UserProcessorAddress {
  projectId: string;
  /** The stream it folds. */
  path: string;
  /** The subscription's key, unique in that stream. */
  key: string;
  /** The `StreamProcessorDurableObject` subclass the config worker exports. */
  className: string;
}

export function parseProcessorKey(key: unknown): string {
  if (typeof key !== "string" || !KEY.test(key)) throw new ItxError("INVALID_ARGUMENT", "key is 1-64 characters of a-z 0-9 -, starting with a letter");
  return key;
}

export function parseClassName(className: unknown): string {
  if (typeof className !== "string" || !CLASS_NAME.test(className)) {
    throw new ItxError("INVALID_ARGUMENT", "className names a class exported by worker.ts (letters, digits, _ $)");
  }
  return className;
}

/**
 * The host's Durable Object name: `<projectId>:` then the rest as JSON. It starts with the project
 * id, as every subscription host must (stream-core.ts), and names everything the host needs, so the
 * host holds no configuration: what it folds is a projection of its name.
 */
export function userProcessorHostName(address: UserProcessorAddress): string {
  return `${address.projectId}:${JSON.stringify([address.path, address.key, address.className])}`;
}

/** The address a host name encodes; throws for a name no subscription could have made. */
export function parseUserProcessorHostName(name: string | undefined): UserProcessorAddress {
  const colon = name?.indexOf(":") ?? -1;
  if (name === undefined || colon <= 0) throw new Error("a user processor host is addressed by its name");
  const parsed: unknown = JSON.parse(name.slice(colon + 1));
  if (!Array.isArray(parsed) || parsed.length !== 3 || typeof parsed[0] !== "string" || !parsed[0].startsWith("/")) throw new Error(`not a user processor host name: ${name}`);
  return { projectId: name.slice(0, colon), path: parsed[0], key: parseProcessorKey(parsed[1]), className: parseClassName(parsed[2]) };
}

/** The facet key of the processor in its context's runner facet host (apart from capability and worker facets). */
export function processorFacetKey(address: UserProcessorAddress): string {
  return `processor:${address.key}`;
}
