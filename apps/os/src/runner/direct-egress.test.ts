import { describe, expect, test } from "vitest";
import { errorCode } from "iterate/errors";
import { DirectEgressVerdicts, sendDirect } from "./direct-egress.ts";
import { EGRESS_MARK_HEADER } from "../egress/egress-rules.ts";

// A network binding that records what it was asked to send and answers 204: the direct road's only
// way out, so what it never saw was never sent.
function recordingNetwork(): { network: Fetcher; sent: Request[] } {
  const sent: Request[] = [];
  const network = {
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      sent.push(new Request(input, init));
      return new Response(null, { status: 204 });
    },
  } as unknown as Fetcher;
  return { network, sent };
}

describe("direct-egress verdicts", () => {
  test("hold only while none is older than the floor, under the runner's own policy", () => {
    const verdicts = new DirectEgressVerdicts();
    expect(verdicts.allows([{ epoch: 10, policy: "loopback" }], "loopback")).toBe(true);
    expect(verdicts.allows([{ epoch: 10, policy: "1" }], "loopback")).toBe(false);
    verdicts.revoke(11);
    expect(verdicts.allows([{ epoch: 10, policy: "loopback" }], "loopback")).toBe(false);
    expect(verdicts.allows([{ epoch: 11, policy: "loopback" }], "loopback")).toBe(true);
    // The floor never goes down (a late or replayed revocation cannot revive old verdicts).
    verdicts.revoke(5);
    expect(verdicts.allows([{ epoch: 10, policy: "loopback" }], "loopback")).toBe(false);
  });

  test("an isolate serving several calls sends directly only when every call holds a verdict; none in flight, none sent", () => {
    const verdicts = new DirectEgressVerdicts();
    const ok = { epoch: 1, policy: "" };
    expect(verdicts.allows([ok, ok], "")).toBe(true);
    expect(verdicts.allows([ok, undefined], "")).toBe(false);
    expect(verdicts.allows([], "")).toBe(false);
  });
});

describe("sendDirect", () => {
  test("refuses what the pipe refuses, with its code, and sends nothing", async () => {
    const { network, sent } = recordingNetwork();
    for (const url of ["http://10.0.0.1/", "http://127.0.0.2:9/", "http://localhost..:9/", "http://[::ffff:127.0.0.1]/", "ftp://127.0.0.1/"]) {
      const error = await sendDirect(network, new Request(url), null, "loopback").then(() => undefined, (failure: unknown) => failure);
      expect(errorCode(error), url).toBe("EGRESS_REFUSED");
    }
    expect(sent).toEqual([]);
  });

  test("leaves a request that may carry a placeholder to the pipe, and sends nothing", async () => {
    const { network, sent } = recordingNetwork();
    const withHeader = new Request("http://127.0.0.1:9/", { headers: { authorization: 'Bearer getSecret("/secrets/x")' } });
    expect(await sendDirect(network, withHeader, null, "loopback")).toBeUndefined();
    const inUrl = new Request('http://127.0.0.1:9/?q=getSecret("/secrets/x")');
    expect(await sendDirect(network, inUrl, null, "loopback")).toBeUndefined();
    expect(sent).toEqual([]);
  });

  test("sends the rest as the pipe would: redirects not followed, headers and the body byte for byte, a placeholder in the body as written", async () => {
    const { network, sent } = recordingNetwork();
    const spelled = new TextEncoder().encode('getSecret("/secrets/x")');
    const body = new Uint8Array([0, 1, 2, 255, ...spelled]).buffer;
    const request = new Request("http://127.0.0.1:9/x?y=1", { method: "PUT", headers: { "x-other": "1" }, body });
    const response = await sendDirect(network, request, body, "loopback");
    expect(response?.status).toBe(204);
    expect(sent).toHaveLength(1);
    const [out] = sent as [Request];
    expect([out.method, out.url, out.redirect, out.headers.get("x-other")]).toEqual(["PUT", "http://127.0.0.1:9/x?y=1", "manual", "1"]);
    expect([...new Uint8Array(await out.arrayBuffer())]).toEqual([0, 1, 2, 255, ...spelled]);
    // Marked as the OS's egress, as the pipe marks it, whatever the code wrote there.
    expect(out.headers.get(EGRESS_MARK_HEADER)).toBe("1");
    await sendDirect(network, new Request("http://127.0.0.1:9/", { headers: { [EGRESS_MARK_HEADER]: "no" } }), null, "loopback");
    expect(sent[1]?.headers.get(EGRESS_MARK_HEADER)).toBe("1");
  });
});
