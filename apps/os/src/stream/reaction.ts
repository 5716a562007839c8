import type { EventSource, Reaction } from "iterate/types";
import { ItxError } from "iterate/errors";
import { reactionTo } from "iterate/stream/events";

export { reactionTo };

/**
 * Most rounds a chain of reactions may run: code reacting to code reacting to ... A write stamped
 * with a later round is refused with LOOP_LIMIT, so two agents answering each other (or a handler
 * appending what it handles) stop on their own.
 */
export const REACTION_ROUNDS_MAX = 5;

export const LOOP_LIMIT_RECORDED = "events.iterate.com/itx/loop-limit";

/**
 * Whether a write's own `source.reaction` counts: only a processor host's writes (through the
 * capability the stream handed it) may say which event they react to. Anyone else is refused.
 */
export function mayDeclareReaction(stamp: EventSource): boolean {
  return stamp.platform?.startsWith("processor-host:") === true;
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
