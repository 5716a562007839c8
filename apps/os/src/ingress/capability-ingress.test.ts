import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, test, vi } from "vitest";
import { ItxError } from "iterate/errors";
import { hostStub } from "../capability-host/host-stub.ts";
import { createProject } from "../project/project-lifecycle.ts";

const caller = { principal: "tester", origin: "/", connectionId: "conn-ingress" };

/** A fresh project whose root provides `name`, exposed over HTTP, with `fetch` as its fetch. */
async function exposed(name: string, fetch: (request: Request) => Response): Promise<string> {
  const slug = `ingress-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  const { projectId } = await createProject(env, slug, "tester");
  await hostStub(env, projectId, "/").provide({ path: [name], capability: { fetch }, caller, http: { expose: true } });
  return `http://${name}--${slug}.localhost/`;
}

function throwing(error: Error): () => Response {
  return () => {
    throw error;
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("capability ingress", () => {
  test("an exposed capability's fetch answers the public", async () => {
    const url = await exposed("hello", () => new Response("hi"));
    const answer = await exports.default.fetch(new Request(url));
    expect([answer.status, await answer.text()]).toEqual([200, "hi"]);
  });

  test("an uncoded failure answers a fixed message and is logged, never shown to the caller", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const url = await exposed("leaky", throwing(new Error("connect postgres://admin:hunter2@10.0.0.5/db failed")));
    const answer = await exports.default.fetch(new Request(url));
    expect(answer.status).toBe(502);
    const body = await answer.text();
    expect(JSON.parse(body)).toEqual({ code: "INTERNAL", message: "the capability failed to answer" });
    expect(body).not.toContain("hunter2");
    expect(logged).toHaveBeenCalledWith("an exposed capability failed to answer over HTTP", expect.objectContaining({ message: expect.stringContaining("hunter2") }));
  });

  test("a coded failure keeps its code and message, and is not logged", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const url = await exposed("guarded", throwing(new ItxError("PERMISSION_DENIED", "members only")));
    const answer = await exports.default.fetch(new Request(url));
    expect(answer.status).toBe(502);
    expect(await answer.json()).toEqual({ code: "PERMISSION_DENIED", message: "members only" });
    expect(logged).not.toHaveBeenCalledWith("an exposed capability failed to answer over HTTP", expect.anything());
  });

  test("the OS's session cookie never reaches the capability (its other cookies do); a host outside the ingress base is not routed", async () => {
    let seen: string | null = "unset";
    const url = await exposed("echo", (request) => {
      seen = request.headers.get("cookie");
      return new Response("ok");
    });
    const answer = await exports.default.fetch(new Request(url, { headers: { cookie: "theme=dark; iterate_session=s.1.sig; __Host-iterate_session=t.2.sig; cart=3" } }));
    expect(answer.status).toBe(200);
    expect(seen).toBe("theme=dark; cart=3");
    await exports.default.fetch(new Request(url, { headers: { cookie: "iterate_session=s.1.sig" } }));
    expect(seen).toBeNull();
    // `echo--<slug>` as the first label of some other domain is not the capability ingress.
    const elsewhere = new URL(url);
    elsewhere.hostname = `${elsewhere.hostname.split(".")[0]}.example.com`;
    const other = await exports.default.fetch(new Request(elsewhere, { headers: { host: elsewhere.host } }));
    expect(await other.text()).not.toBe("ok");
  });
});
