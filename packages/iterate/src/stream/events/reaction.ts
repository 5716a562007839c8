import type { Reaction, StreamEvent } from "../../types.ts";

/** Longest `began` coordinate a reaction may carry: a stream path plus `#<offset>`. */
export const REACTION_BEGAN_MAX_LENGTH = 2_100;

/**
 * The reaction stamp for code that runs because of `event`: one round further along the chain
 * the event belongs to, or round 1 of a chain that begins at the event.
 *
 * @example
 * reactionTo({ streamPath: "/agents/a", offset: 7, source: {} }); // { began: "/agents/a#7", round: 1 }
 */
export function reactionTo(event: Pick<StreamEvent, "streamPath" | "offset" | "source">): Reaction {
  const earlier = event.source.reaction;
  if (earlier) return { began: earlier.began, round: earlier.round + 1 };
  return { began: `${event.streamPath}#${event.offset}`, round: 1 };
}

/** The reaction in `value` when it is well formed, else undefined. */
export function parseReaction(value: unknown): Reaction | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { began, round, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) return undefined;
  if (typeof began !== "string" || began.length === 0 || began.length > REACTION_BEGAN_MAX_LENGTH) return undefined;
  if (typeof round !== "number" || !Number.isSafeInteger(round) || round < 0) return undefined;
  return { began, round };
}
