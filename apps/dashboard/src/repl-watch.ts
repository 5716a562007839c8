import type { AnyHandle } from "iterate/react";
import type { StreamEvent } from "iterate/types";

/** A live tail of a context's stream; `stop` unsubscribes (safe to call twice). */
export interface Watch {
  stop(): void;
}

/**
 * Tails the stream of the handle's context from its current head: every event appended from now
 * on (the run's own `itx/run-requested` and `itx/run-settled`, what the script appends, ephemeral
 * events too) reaches `onBatch` as it commits. This is how a REPL run streams into the page.
 */
export async function watchContext(itx: AnyHandle, onBatch: (events: StreamEvent[]) => void): Promise<Watch> {
  const stream: AnyHandle = itx.streams.get("/");
  const head = (await stream.head()) as number;
  let stopped = false;
  const answer = (await stream.subscribe((batch: StreamEvent[]) => {
    if (!stopped) onBatch(batch);
  }, { afterOffset: head })) as { key: string };
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      void Promise.resolve(stream.unsubscribe(answer.key)).catch(() => undefined);
    },
  };
}
