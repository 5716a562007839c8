import { ItxError } from "iterate/errors";

/**
 * The default behind `itx.fetch` until the egress pipe exists: plain HTTP(S) from the Worker.
 * Only http: and https: URLs leave; everything else is EGRESS_REFUSED.
 */
export async function defaultFetch(input: unknown, init?: unknown): Promise<Response> {
  const request = input instanceof Request ? input : new Request(String(input), init as RequestInit | undefined);
  const protocol = new URL(request.url).protocol;
  if (protocol !== "http:" && protocol !== "https:") {
    throw new ItxError("EGRESS_REFUSED", `egress only sends http: and https: requests, not ${protocol}`);
  }
  return fetch(request);
}
