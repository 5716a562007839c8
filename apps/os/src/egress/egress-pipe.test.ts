import { describe, expect, test } from "vitest";
import { ItxError } from "iterate/errors";
import { substituteHeaders } from "./egress-pipe.ts";

const MATERIAL = "sk-header-1234";

function refusal(headers: Headers, materials: Map<string, string>): ItxError {
  try {
    substituteHeaders(headers, materials);
  } catch (error) {
    if (error instanceof ItxError) return error;
    throw error;
  }
  throw new Error("the headers were substituted without a refusal");
}

describe("substituteHeaders", () => {
  test("fills every header value's placeholders and leaves other headers as they were", () => {
    const headers = new Headers({ authorization: 'Bearer getSecret("/secrets/a")', "x-both": 'getSecret("/secrets/a"):getSecret("/secrets/a")', "x-other": "kept" });
    substituteHeaders(headers, new Map([["/secrets/a", MATERIAL]]));
    expect(Object.fromEntries(headers)).toEqual({ authorization: `Bearer ${MATERIAL}`, "x-both": `${MATERIAL}:${MATERIAL}`, "x-other": "kept" });
  });

  test("material that is not printable ASCII (stored before updates refused it) is refused, naming the header and not the material", () => {
    for (const material of [`${MATERIAL}\r\nx-injected: 1`, `${MATERIAL}\u0000`, `${MATERIAL}-é€😀`]) {
      const headers = new Headers({ "x-key": 'getSecret("/secrets/a")' });
      const error = refusal(headers, new Map([["/secrets/a", material]]));
      expect(error.code).toBe("EGRESS_REFUSED");
      expect(error.details).toEqual({ reason: "header-value", header: "x-key" });
      expect(error.message).not.toContain(MATERIAL);
      // Nothing was set: the request still holds the placeholder.
      expect(headers.get("x-key")).toBe('getSecret("/secrets/a")');
    }
  });
});
