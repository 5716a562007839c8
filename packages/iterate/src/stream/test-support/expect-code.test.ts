import { describe, expect, test } from "vitest";
import { ItxError } from "../../errors/index.ts";
import { expectCode } from "./expect-code.ts";

describe("expectCode", () => {
  test("answers the error when the code matches", async () => {
    const error = await expectCode(Promise.reject(new ItxError("NOT_FOUND", "gone")), "NOT_FOUND");
    expect(error.message).toContain("gone");
    expect((await expectCode(() => { throw new ItxError("TIMEOUT", "late"); }, "TIMEOUT")).code).toBe("TIMEOUT");
  });

  test("a callable thenable (a Workers RPC promise) is awaited, not called", async () => {
    const rejected = Promise.reject(new ItxError("NOT_FOUND", "gone"));
    // oxlint-disable-next-line unicorn/consistent-function-scoping -- a fresh function: Object.assign gives it a `then`
    const called = () => {
      throw new Error("called");
    };
    // oxlint-disable-next-line unicorn/no-thenable -- a thenable function is exactly what is tested
    const rpcLike = Object.assign(called, { then: rejected.then.bind(rejected) });
    expect((await expectCode(rpcLike, "NOT_FOUND")).message).toContain("gone");
  });

  test("fails on success, on another code, and on an uncoded error", async () => {
    await expect(expectCode(Promise.resolve(42), "NOT_FOUND")).rejects.toThrow("expected NOT_FOUND, but it succeeded with 42");
    await expect(expectCode(Promise.reject(new ItxError("TIMEOUT", "late")), "NOT_FOUND", "probe")).rejects.toThrow("expected NOT_FOUND (probe), got TIMEOUT: [TIMEOUT] late");
    await expect(expectCode(Promise.reject(new Error("plain")), "NOT_FOUND")).rejects.toThrow("got an uncoded error: plain");
  });
});
