import type { EventSource, Reaction } from "iterate/types";
import { ItxError } from "iterate/errors";
import { reactionTo } from "iterate/stream/events";
import { LIMITS, limitDetails } from "../limits.ts";

export { reactionTo };


export const LOOP_LIMIT_RECORDED = "events.iterate.com/itx/loop-limit";

/**
 * Whether a write's own `source.reaction` counts: only a processor host's writes (through the
 * capability the stream handed it) may say which event they react to. Anyone else is refused.
 */
export function mayDeclareReaction(stamp: EventSource): boolean {
  return stamp.platform?.startsWith("processor-host:") === true;
}

/** True when a write with this source would take its chain past LIMITS.REACTION_ROUNDS_MAX. */
export function isRunaway(source: EventSource): boolean {
  return (source.reaction?.round ?? 0) > LIMITS.REACTION_ROUNDS_MAX;
}

/** The error a runaway write gets: it names where the chain began. */
export function loopLimitError(reaction: Reaction, streamPath: string): ItxError {
  return new ItxError(
    "LOOP_LIMIT",
    `a chain of reactions that began at ${reaction.began} reached round ${reaction.round} writing to ${streamPath}; ` +
      `chains stop after ${LIMITS.REACTION_ROUNDS_MAX} rounds (LIMITS.REACTION_ROUNDS_MAX)`,
    { details: { began: reaction.began, round: reaction.round, ...limitDetails("REACTION_ROUNDS_MAX") } },
  );
}
