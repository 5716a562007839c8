import type { StreamEvent } from "iterate/types";
import { ItxError, errorCode } from "iterate/errors";
import type { streamStub } from "../stream/stream-rpc-target.ts";
import { limitDetails } from "../limits.ts";

/**
 * Calls `close` when the platform writer `writer` appends `endType` to `stream` (a token revoked,
 * a browser session ended), for as long as the connection lasts: a live subscription under `key`.
 * The stream refuses more than LIVE_SUBSCRIBERS_MAX subscriptions; that refusal is answered as
 * UNAVAILABLE with `tooMany` as its message. Answers the unsubscribe.
 */
export async function watchEnd(
  stream: ReturnType<typeof streamStub>,
  watch: { key: string; endType: string; writer: string; tooMany: string },
  close: () => void,
): Promise<() => void> {
  const { key, endType, writer, tooMany } = watch;
  try {
    await stream.subscribe({
      key,
      types: [endType],
      callback: (batch: StreamEvent[]) => {
        if (batch.some((event) => event.type === endType && event.source.platform === writer)) close();
      },
    });
  } catch (error) {
    if (errorCode(error) === "INVALID_ARGUMENT") throw new ItxError("UNAVAILABLE", tooMany, { details: limitDetails("LIVE_SUBSCRIBERS_MAX") });
    throw error;
  }
  return () => {
    Promise.resolve(stream.unsubscribe(key)).catch(() => undefined);
  };
}
