import { ItxError, errorCode, errorMessage } from "iterate/errors";
import type { BUILT_INS } from "../itx/built-ins.ts";
import type { ItxRpcTarget } from "../itx/itx-rpc-target.ts";
import { OPEN_EVENTS, writeRuleOf } from "../stream/write-authority.ts";

/** One tool a project's MCP server lists. */
export interface ProjectTool {
  name: string;
  description: string;
  inputSchema: { type: "object"; properties?: Record<string, unknown>; required?: string[]; additionalProperties?: boolean };
}

interface BuiltInTool {
  description: string;
  inputSchema: ProjectTool["inputSchema"];
  call(itx: ItxRpcTarget, args: Record<string, unknown>): Promise<unknown>;
}

/**
 * The built-ins a project's MCP server offers, by policy: members that take and answer JSON, act
 * on the project's root context only, and never hand out authority (no handles, no live stubs,
 * no code execution: `run`, `workers`, `provideCapability` and the secrets stay on /api, where a
 * person's client holds them, not an assistant that reads untrusted text). Keyed by the names of
 * the built-ins table, so a renamed built-in fails the build here.
 */
export const MCP_BUILT_IN_TOOLS: { readonly [K in keyof typeof BUILT_INS]?: BuiltInTool } = {
  whoami: {
    description: "The project, context path, origin and principal this MCP session acts as.",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
    call: (itx) => itx.whoami(),
  },
  readEvents: {
    description: "A page of the project root context's events: { events, nextOffset? }. Pass afterOffset to continue.",
    inputSchema: {
      type: "object",
      properties: { afterOffset: { type: "integer", minimum: 0 }, limit: { type: "integer", minimum: 1, maximum: 500 } },
      additionalProperties: false,
    },
    call: (itx, args) => itx.readEvents(args as never),
  },
  append: {
    description: "Appends events to the project root context's stream: { events: [{ type, payload? }] }; answers the stored events.",
    inputSchema: {
      type: "object",
      properties: { events: { type: "array", minItems: 1, items: { type: "object", properties: { type: { type: "string" }, payload: {} }, required: ["type"] } } },
      required: ["events"],
      additionalProperties: false,
    },
    call: (itx, args) => {
      const events = Array.isArray(args.events) ? args.events : [];
      refusePlatformTypes(events);
      return itx.append(...(events as never[]));
    },
  },
};

/**
 * MCP's `append` writes the client's own event types only. A type a platform contract acts on is
 * refused here even when the Stream would take it from this writer: an `itx/run-requested` with
 * `enqueued` makes the root's capability host run its script as the token's principal, which is
 * `run` by another name, and the policy above keeps code execution off MCP.
 */
function refusePlatformTypes(events: unknown[]): void {
  for (const [index, event] of events.entries()) {
    const type = (event as { type?: unknown } | null)?.type;
    if (typeof type === "string" && (Object.hasOwn(OPEN_EVENTS, type) || writeRuleOf(type) !== undefined)) {
      throw new ItxError("PERMISSION_DENIED", `event ${index}: ${type} is acted on by the platform; MCP's append writes only your own event types`, {
        details: { index, type, reason: "platform-event" },
      });
    }
  }
}

const MOUNT_INPUT: ProjectTool["inputSchema"] = {
  type: "object",
  properties: { args: { type: "array", description: "The capability's arguments, in order (JSON values)." } },
  additionalProperties: false,
};

// MCP tool names: letters, digits, "_", "-", "." (a path's segments joined by ".").
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Whether `name` can name a mount: a tool name whose "."-separated segments are path segments. */
export function isMountToolName(name: string): boolean {
  return TOOL_NAME.test(name) && name.split(".").every((segment) => /^[A-Za-z_][A-Za-z0-9_-]*$/.test(segment));
}

/** A mount of the project, as a tool: its path joined by ".", its instructions and types as the description. */
export interface MountTool extends ProjectTool {
  path: string[];
  /** False once a live mount's provider is gone: not listed, but a call still answers its error. */
  connected: boolean;
}

/** The tools of a project's root context: the policy's built-ins, then every unshadowed mount. */
export async function projectTools(itx: ItxRpcTarget): Promise<{ builtIns: ProjectTool[]; mounts: MountTool[] }> {
  const description = await itx.__describe();
  const builtIns = Object.entries(MCP_BUILT_IN_TOOLS).flatMap(([name, tool]) => (tool ? [{ name, description: tool.description, inputSchema: tool.inputSchema }] : []));
  const taken = new Set(builtIns.map((tool) => tool.name));
  const mounts: MountTool[] = [];
  for (const row of description.capabilities) {
    if (row.kind === "built-in" || row.shadowed) continue;
    const name = row.path.join(".");
    // A path spelled with "$" has no MCP name; it stays reachable over /api.
    if (!TOOL_NAME.test(name) || taken.has(name)) continue;
    taken.add(name);
    const text = [row.instructions ?? `The capability ${name}.`, row.types ? `Types:\n${row.types}` : "", "Call with { args: [...] }, the arguments in order."];
    mounts.push({ name, path: row.path, connected: row.connected, description: text.filter(Boolean).join("\n\n"), inputSchema: MOUNT_INPUT });
  }
  return { builtIns, mounts };
}

/** A tool's answer: JSON as text and, for objects, as structured content; a coded error as `isError`. */
export async function toolResult(run: () => Promise<unknown>): Promise<{ content: Array<{ type: "text"; text: string }>; structuredContent?: Record<string, unknown>; isError?: boolean }> {
  try {
    const value = await run();
    const json = value === undefined ? null : (JSON.parse(JSON.stringify(value) ?? "null") as unknown);
    return { content: [{ type: "text", text: JSON.stringify(json) }], structuredContent: { result: json } };
  } catch (error) {
    const code = errorCode(error) ?? "INTERNAL";
    const message = errorCode(error) ? errorMessage(error) : "the capability failed";
    // The dispatcher marks a path nothing is mounted at; the route answers that as an unknown tool.
    const unresolved = (error as { details?: { unresolved?: unknown } } | null)?.details?.unresolved;
    return {
      isError: true,
      content: [{ type: "text", text: `${code}: ${message}` }],
      structuredContent: { code, message, ...(code === "NOT_FOUND" && typeof unresolved === "string" ? { unresolved } : {}) },
    };
  }
}
