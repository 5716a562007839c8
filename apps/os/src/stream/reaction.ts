import type { EventSource, Reaction, StreamEvent } from "iterate/types";
import { ItxError } from "iterate/errors";

/**
 * Most rounds a chain of reactions may run: code reacting to code reacting to ... A write stamped
 * with a later round is refused with LOOP_LIMIT, so two agents answering each other (or a handler
 * appending what it handles) stop on their own.
 */
export const REACTION_ROUNDS_MAX = 5;

export const LOOP_LIMIT_RECORDED = "events.iterate.com/itx/loop-limit";

/** The reaction stamp for code that runs because of `event`: one round further along its chain. */
export function reactionTo(event: Pick<StreamEvent, "streamPath" | "offset" | "source">): Reaction {
  const earlier = event.source.reaction;
  if (earlier) return { began: earlier.began, round: earlier.round + 1 };
  return { began: `${event.streamPath}#${event.offset}`, round: 1 };
}

/** The reaction on a stamp, when well formed; anything else is dropped. */
export function trustedReaction(value: unknown): Reaction | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { began, round } = value as Record<string, unknown>;
  if (typeof began !== "string" || began.length === 0 || began.length > 2_100) return undefined;
  if (typeof round !== "number" || !Number.isSafeInteger(round) || round < 0) return undefined;
  return { began, round };
}

/** True when a write with this source would take its chain past REACTION_ROUNDS_MAX. */
export function isRunaway(source: EventSource): boolean {
  return (source.reaction?.round ?? 0) > REACTION_ROUNDS_MAX;
}

/** The error a runaway write gets: it names where the chain began. */
export function loopLimitError(reaction: Reaction, streamPath: string): ItxError {
  return new ItxError(
    "LOOP_LIMIT",
    `a chain of reactions that began at ${reaction.began} reached round ${reaction.round} writing to ${streamPath}; ` +
      `chains stop after ${REACTION_ROUNDS_MAX} rounds (REACTION_ROUNDS_MAX)`,
    { details: { began: reaction.began, round: reaction.round, limit: "REACTION_ROUNDS_MAX" } },
  );
}
