import { afterAll, beforeAll } from "vitest";
import { adminSession, target } from "../harness/os.ts";
import { newProject } from "../harness/projects.ts";

/**
 * The conformance suite takes a base URL and calls the global `fetch`. This setup gives it a
 * project of its own and a bearer token for it, and adds the token to the suite's requests to
 * that project's /streams URLs: the route stays authenticated, and nothing else is touched.
 * `options.baseUrl` is filled in before the first test (the suite reads it lazily).
 */
export function withStreamCredentials(options: { baseUrl: string }): void {
  const unpatched = globalThis.fetch;
  beforeAll(async () => {
    const { slug } = await newProject("ds-conformance");
    using session = adminSession();
    const { token } = await session.issueToken({ principal: "ds-conformance", projectIds: [slug], ttlSeconds: 3600 });
    options.baseUrl = `${target().baseUrl}/streams/${slug}`;
    const prefix = options.baseUrl;
    globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      if (!url.startsWith(prefix)) return unpatched(input, init);
      const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
      if (!headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
      return unpatched(input, { ...init, headers });
    };
  });
  afterAll(() => {
    globalThis.fetch = unpatched;
  });
}
