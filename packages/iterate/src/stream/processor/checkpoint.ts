import { z } from "zod";
import { ItxError } from "../../errors/index.ts";
import type { SkippedEvent, StreamEvent } from "../../types.ts";
import { utf8ByteLength, utf8FitsIn } from "../events/index.ts";
import { compileSafeParse } from "./compiled-schema.ts";
import type { AnyProcessorContract } from "./contract.ts";
import type { FoldStep } from "./fold.ts";
import { checkpointKey, type ProcessorStorage } from "./host.ts";

/** How many recent skips a checkpoint keeps; the count keeps them all. */
export const RECENT_SKIPS_MAX = 10;
/**
 * Issues a kept skip lists, and characters of each: a schema's message can grow with the payload
 * (a strict object names every key it does not know), and any writer of a consumed type chooses
 * the payload, so a skip kept whole could fill the checkpoint past its bound.
 */
export const SKIP_ISSUES_MAX = 5;
export const SKIP_ISSUE_MAX_LENGTH = 300;

/** What an engine commits for a processor, once per batch. */
export interface ProcessorCheckpoint {
  slug: string;
  version: string;
  /** The last durable offset folded into `state`. */
  offset: number;
  state: unknown;
  skipped: number;
  /** The last RECENT_SKIPS_MAX skipped events, oldest first. */
  recentSkips: SkippedEvent[];
}

const checkpointSchema = z.object({
  slug: z.string(),
  version: z.string(),
  offset: z.number().int().nonnegative(),
  state: z.unknown(),
  skipped: z.number().int().nonnegative(),
  recentSkips: z.array(z.object({ offset: z.number(), type: z.string(), issues: z.array(z.string()) })),
});
const parseCheckpoint = compileSafeParse(checkpointSchema);

/** What storage holds for a processor: a checkpoint to continue from, nothing at all, or the need to rebuild. */
export type LoadedCheckpoint =
  | { kind: "current"; checkpoint: ProcessorCheckpoint }
  /** Never committed: every event is new to it, side effects included. */
  | { kind: "new" }
  /**
   * Rebuild by replay, without side effects: to the old checkpoint's offset after a version bump or
   * an unparseable state, to the head when the checkpoint was deleted (`replayTo` undefined).
   */
  | { kind: "rebuild"; replayTo: number | undefined };

/**
 * Reads a processor's checkpoint. One written by another contract version, or whose state no
 * longer parses, asks for a rebuild up to its offset. A missing one asks for a rebuild up to the
 * head when the processor's birth marker says it committed before (the checkpoint was deleted),
 * and otherwise means the processor is new.
 */
export async function loadCheckpoint(storage: ProcessorStorage, contract: AnyProcessorContract): Promise<LoadedCheckpoint> {
  const raw = await storage.get(checkpointKey(contract.slug));
  const stored = parseCheckpoint(raw);
  if (!stored.success) {
    const born = raw !== undefined || (await storage.get(bornKey(contract.slug))) !== undefined;
    return born ? { kind: "rebuild", replayTo: undefined } : { kind: "new" };
  }
  const checkpoint = stored.data as ProcessorCheckpoint;
  if (checkpoint.version !== contract.version || !compileSafeParse(contract.stateSchema)(checkpoint.state).success) {
    return { kind: "rebuild", replayTo: checkpoint.offset };
  }
  return { kind: "current", checkpoint };
}

// Written once, after a processor's first commit. It tells a deleted checkpoint (rebuild quietly)
// from a processor that never ran (process everything). Deleting the whole prefix starts over.
function bornKey(slug: string): string {
  return `processor/${slug}/born`;
}

/** The checkpoint of a processor that has folded nothing yet. */
export function emptyCheckpoint(contract: AnyProcessorContract): ProcessorCheckpoint {
  return { slug: contract.slug, version: contract.version, offset: 0, state: contract.initialState(), skipped: 0, recentSkips: [] };
}

/** Moves a checkpoint being built past one event, by what folding it came to. */
export function advanceCheckpoint(checkpoint: ProcessorCheckpoint, event: StreamEvent, step: FoldStep): ProcessorCheckpoint {
  if (step.kind === "folded") return { ...checkpoint, offset: event.offset, state: step.state };
  if (step.kind === "ignored") return { ...checkpoint, offset: event.offset };
  const issues = step.issues.slice(0, SKIP_ISSUES_MAX).map((issue) => (issue.length > SKIP_ISSUE_MAX_LENGTH ? `${issue.slice(0, SKIP_ISSUE_MAX_LENGTH)}...` : issue));
  if (step.issues.length > SKIP_ISSUES_MAX) issues.push(`... and ${step.issues.length - SKIP_ISSUES_MAX} more`);
  const skip = { offset: event.offset, type: event.type, issues };
  const recentSkips = [...checkpoint.recentSkips, skip].slice(-RECENT_SKIPS_MAX);
  return { ...checkpoint, offset: event.offset, skipped: checkpoint.skipped + 1, recentSkips };
}

/**
 * Writes a checkpoint, or throws LIMIT_EXCEEDED (details.limit "CHECKPOINT_MAX_BYTES") and writes
 * nothing when its JSON is larger than `maxBytes`.
 */
export async function commitCheckpoint(
  storage: ProcessorStorage,
  checkpoint: ProcessorCheckpoint,
  maxBytes: number,
): Promise<void> {
  // Committed on every batch: most checkpoints are far below the bound and are not counted.
  const json = JSON.stringify(checkpoint);
  if (!utf8FitsIn(json, maxBytes)) {
    const bytes = utf8ByteLength(json);
    throw new ItxError(
      "LIMIT_EXCEEDED",
      `the checkpoint of processor "${checkpoint.slug}" at offset ${checkpoint.offset} is ${bytes} bytes; at most ${maxBytes} are allowed`,
      { details: { limit: "CHECKPOINT_MAX_BYTES", bytes, maxBytes, slug: checkpoint.slug, offset: checkpoint.offset } },
    );
  }
  await storage.put(checkpointKey(checkpoint.slug), checkpoint);
}

/** Records that a processor has committed, once; see `loadCheckpoint`. */
export async function markBorn(storage: ProcessorStorage, checkpoint: ProcessorCheckpoint): Promise<void> {
  await storage.put(bornKey(checkpoint.slug), { slug: checkpoint.slug, version: checkpoint.version });
}
