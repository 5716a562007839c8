import type { StreamEvent, WaitForEventInput } from "iterate/types";

/**
 * `waitForEvent` for as long as a first bundler build can take: the first build of a test run
 * compiles esbuild's wasm, tens of seconds on a loaded machine, past one wait's timeout.
 */
export async function waitLong(stream: { waitForEvent(input: WaitForEventInput): Promise<StreamEvent> }, query: Omit<WaitForEventInput, "timeoutMs">): Promise<StreamEvent> {
  const deadline = Date.now() + 150_000;
  for (;;) {
    try {
      return await stream.waitForEvent({ ...query, timeoutMs: 30_000 });
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
  }
}
