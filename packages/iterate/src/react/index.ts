/**
 * `iterate/react`: React bindings for an iterate OS, in the browser or wherever React runs.
 * `react` is a peer dependency.
 *
 * @example
 * import { ItxProvider, useAgent } from "iterate/react";
 *
 * function Chat() {
 *   const agent = useAgent("/agents/support");
 *   return <>{agent.entries.map((e) => <p key={e.offset}>{e.kind}: {"text" in e ? e.text : e.script}</p>)}</>;
 * }
 * function Project({ slug }) {
 *   const session = useItx();
 *   // Memoize narrowed handles: a new stub each render would re-subscribe every hook below.
 *   const project = useMemo(() => session.projects.get(slug), [session, slug]);
 *   return <ItxProvider itx={project}><Chat /></ItxProvider>;
 * }
 * // In a page the OS serves, the session cookie authenticates: no secret in page script.
 * <ItxProvider><Project slug="my-site" /></ItxProvider>;
 * @module
 */
export { ItxProvider, useItx, useItxBroken, type AnyHandle, type AsyncState, type ItxProviderProps } from "./provider.ts";
export { useDescribe } from "./use-describe.ts";
export { useStream, type StreamState, type UseStreamOptions } from "./use-stream.ts";
export { useAgent, type AgentState } from "./use-agent.ts";
export { emptyConversation, foldConversation, type Conversation, type ConversationEntry } from "./conversation.ts";
