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
  // The depth is part of the authority: an isolate's env carries it, and LIMITS.CALL_DEPTH_MAX counts it
  // down, so code that calls itself must get a fresh isolate per hop. A JSON tuple keeps fields
  // apart whatever they spell (a principal may contain ":").
  return JSON.stringify([
    props.projectId,
    props.origin,
    props.path ?? props.origin,
    props.principal,
    props.depth,
    props.reaction ? [props.reaction.began, props.reaction.round] : null,
    props.confinement ? props.confinement.grants : null,
  ]);
}
