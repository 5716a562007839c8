import { describe, expect, test } from "vitest";
import { errorCode } from "iterate/errors";
import { LIMITS } from "../limits.ts";
import { Connection } from "./connection.ts";

describe("a connection", () => {
  test("tracks live provides to at most CONNECTION_LIVE_CONTEXTS_MAX contexts; known ones stay allowed", () => {
    const connection = new Connection("websocket");
    const env = {} as Env;
    for (let i = 0; i < LIMITS.CONNECTION_LIVE_CONTEXTS_MAX; i++) {
      connection.assertMayTrack("prj_a", `/c${i}`);
      connection.trackLiveProvide(env, "prj_a", `/c${i}`);
    }
    connection.assertMayTrack("prj_a", "/c0");
    let refused: unknown;
    try {
      connection.assertMayTrack("prj_a", "/one-more");
    } catch (error) {
      refused = error;
    }
    expect(errorCode(refused)).toBe("INVALID_ARGUMENT");
    expect((refused as { details?: { limit?: string } }).details?.limit).toBe("CONNECTION_LIVE_CONTEXTS_MAX");
  });
});
