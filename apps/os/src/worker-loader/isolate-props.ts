import type { Reaction } from "iterate/types";
import type { Confinement } from "../capability-host/jail.ts";

/**
 * What a loaded isolate is bound to: fixed by the platform when it builds the isolate's env, never
 * by the isolate. `origin` is the context whose code runs there.
 */
export interface IsolateProps {
  principal: string;
  projectId: string;
  origin: string;
  /** The context the code's itx fronts (its chain, its stream); the origin's own when absent. */
  path?: string;
  /** Set when the origin is a jail: the code reaches only what the jail grants (capability-host/jail.ts). */
  confinement?: Confinement;
  depth: number;
  /** Set when the code runs in reaction to an event: its writes carry the chain one round on. */
  reaction?: Reaction;
}

/**
 * The part of a Loader isolate's id that names its authority. An isolate's env is fixed when it
 * loads, so two scopes (or two rounds of a reaction chain) must never share one.
 */
export function isolateScopeKey(props: IsolateProps): string {
  return JSON.stringify([...authorityFields(props), reactionKey(props)]);
}

/**
 * The part of the scope key that is authority: everything but the reaction chain, which only
 * stamps what the code writes. The runner keys isolates by this and keeps calls of different
 * chains apart itself (RunnerLoad.variant), because its isolates take their authority per call
 * (a lent token) rather than from an env fixed at load: an agent's next turn, a new chain with
 * the same script, then finds its isolate warm.
 */
export function isolateAuthorityKey(props: IsolateProps): string {
  return JSON.stringify(authorityFields(props));
}

/** The reaction chain and round an isolate's calls stamp their writes with (null outside a chain). */
export function reactionKey(props: IsolateProps): string | null {
  return props.reaction ? JSON.stringify([props.reaction.began, props.reaction.round]) : null;
}

// The depth is part of the authority: an isolate's env carries it, and LIMITS.CALL_DEPTH_MAX counts it
// down, so code that calls itself must get a fresh isolate per hop. A JSON tuple keeps fields
// apart whatever they spell (a principal may contain ":").
function authorityFields(props: IsolateProps): unknown[] {
  return [props.projectId, props.origin, props.path ?? props.origin, props.principal, props.depth, props.confinement ? props.confinement.grants : null];
}
