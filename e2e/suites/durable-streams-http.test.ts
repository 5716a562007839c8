import { describe, expect } from "vitest";
import type { RpcStub } from "capnweb";
import { DurableStream, IdempotentProducer, stream as readStream } from "@durable-streams/client";
import type { Session, StreamEvent } from "iterate/types";
import { test, type Connect } from "../harness/fixtures.ts";
import { newProject } from "../harness/projects.ts";

// The Durable Streams HTTP protocol at /streams/<project>/<path>, with the published client on
// one side and iterate's Cap'n Web client on the other.
const MESSAGE = "events.iterate.com/durable-streams/message-appended";
const unique = () => `/ds/${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

async function tokenFor(admin: RpcStub<Session>, slug: string, principal: string): Promise<string> {
  const { token } = await admin.issueToken({ principal, projectIds: [slug], ttlSeconds: 600 });
  return token;
}

/** The fixtures `setUp` takes from a test. */
interface SetUpFixtures {
  os: { baseUrl: string };
  admin: RpcStub<Session>;
  project: { slug: string; projectId: string };
  connect: Connect;
}

/** The test's project, a token for it acting as `<prefix>-writer`, and an itx and HTTP helpers with that token. */
async function setUp({ os, admin, project, connect }: SetUpFixtures, prefix: string) {
  const { slug, projectId } = project;
  const token = await tokenFor(admin, slug, `${prefix}-writer`);
  const { baseUrl } = os;
  const itx = connect({ auth: { type: "bearer", token }, projectId });
  const url = (path: string) => `${baseUrl}/streams/${slug}${path}`;
  const auth = { authorization: `Bearer ${token}` };
  return { slug, token, itx, url, auth, baseUrl };
}

describe("Durable Streams over HTTP and iterate over Cap'n Web see one stream", () => {
  test("written with @durable-streams/client, read with iterate: one event per message, stamped with the token's principal", async ({ os, admin, project, connect }) => {
    const { itx, url, auth } = await setUp({ os, admin, project, connect }, "ds-write");
    const path = unique();
    const handle = await DurableStream.create({ url: url(path), contentType: "application/json", headers: auth });
    await handle.append(JSON.stringify({ n: 1 }));
    // The client sends each append as a one-element batch: this array is one message.
    await handle.append(JSON.stringify([{ n: 2 }, "three", null]));
    const producer = new IdempotentProducer(handle, "e2e-producer", { autoClaim: true });
    for (let i = 4; i <= 6; i++) producer.append(JSON.stringify({ n: i }));
    await producer.flush();
    await producer.detach();

    const events = await (await itx.streams.get(path)).getEvents({});
    expect(events.map((event) => event.type)).toEqual(Array(5).fill(MESSAGE));
    expect(events.map((event) => event.payload)).toEqual([{ n: 1 }, [{ n: 2 }, "three", null], { n: 4 }, { n: 5 }, { n: 6 }]);
    expect(events.map((event) => event.offset)).toEqual([1, 2, 3, 4, 5]);
    for (const event of events) expect(event.source).toEqual({ principal: "ds-write-writer", origin: "/" });
  });

  test("written with iterate, read with @durable-streams/client: messages as themselves, other events as event objects", async ({ os, admin, project, connect }) => {
    const { itx, url, auth } = await setUp({ os, admin, project, connect }, "ds-read");
    const path = unique();
    const stream = await itx.streams.get(path);
    await stream.append({ type: MESSAGE, payload: { hello: "http" } }, { type: "demo/ping", payload: { n: 1 } });
    const response = await readStream({ url: url(path), offset: "-1", live: false, headers: auth });
    const items = (await response.json()) as unknown[];
    expect(items[0]).toEqual({ hello: "http" });
    expect(items[1]).toMatchObject({ offset: 2, type: "demo/ping", payload: { n: 1 }, source: { principal: "ds-read-writer", origin: "/" } });
    expect(items).toHaveLength(2);
  });

  test("a long-poll reader of the published client wakes for a Cap'n Web append", async ({ os, admin, project, connect }) => {
    const { itx, url, auth } = await setUp({ os, admin, project, connect }, "ds-live");
    const path = unique();
    const stream = await itx.streams.get(path);
    await stream.append({ type: MESSAGE, payload: "first" });
    const response = await readStream({ url: url(path), offset: "-1", live: "long-poll", headers: auth });
    const seen: unknown[] = [];
    const done = new Promise<void>((resolve) => {
      response.subscribeJson(async (batch: { items: readonly unknown[] }) => {
        seen.push(...batch.items);
        if (seen.length >= 2) resolve();
      });
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await stream.append({ type: MESSAGE, payload: "second" });
    await done;
    response.cancel();
    expect(seen).toEqual(["first", "second"]);
  });
});

describe("/streams is authenticated, confined and bounded", () => {
  test("no token is 401; a token of another project sees exactly what a missing stream shows", async ({ os, admin, project, connect }) => {
    const mine = await setUp({ os, admin, project, connect }, "ds-mine");
    const theirs = await newProject("ds-theirs");
    const path = unique();
    await fetch(mine.url(path), { method: "PUT", headers: { ...mine.auth, "content-type": "application/json" } });
    expect((await fetch(mine.url(path))).status).toBe(401);
    expect((await fetch(mine.url(path), { headers: { authorization: "Bearer not-a-token" } })).status).toBe(401);
    const other = `${mine.baseUrl}/streams/${theirs.slug}${path}`;
    const forbidden = await fetch(other, { headers: mine.auth });
    const missing = await fetch(mine.url(`${path}-missing`), { headers: mine.auth });
    expect([forbidden.status, await forbidden.text()]).toEqual([missing.status, await missing.text()]);
    expect(forbidden.status).toBe(404);
    // Writes to the other project's stream do not create it there.
    expect((await fetch(other, { method: "PUT", headers: mine.auth })).status).toBe(404);
    const owner = await tokenFor(admin, theirs.slug, "ds-theirs-owner");
    expect((await fetch(other, { method: "HEAD", headers: { authorization: `Bearer ${owner}` } })).status).toBe(404);
  });

  test("a context's own stream is readable but cannot be deleted, and HTTP writes cannot be platform events", async ({ os, admin, project, connect }) => {
    const { itx, url, auth } = await setUp({ os, admin, project, connect }, "ds-context");
    const read = await fetch(url("/?offset=-1"), { headers: auth });
    expect(read.status).toBe(200);
    const events = (await read.json()) as Array<{ type: string }>;
    expect(events.map((event) => event.type)).toContain("events.iterate.com/itx/created");
    const before = read.headers.get("stream-next-offset");
    expect((await fetch(url("/"), { method: "DELETE", headers: auth })).status).toBe(403);
    // Nor closed: HTTP readers would stop at the mark while the context goes on writing.
    expect((await fetch(url("/"), { method: "POST", headers: { ...auth, "Stream-Closed": "true" } })).status).toBe(403);
    expect((await fetch(url("/"), { method: "HEAD", headers: auth })).headers.get("stream-closed")).toBeNull();
    // Whatever the body says, an HTTP append is a message: it cannot be an itx/capability-provided row.
    const forged = JSON.stringify({ type: "events.iterate.com/itx/capability-provided", payload: { path: ["x"] } });
    const post = await fetch(url("/"), { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: forged });
    expect(post.status).toBe(204);
    const stream = await itx.streams.get("/");
    // The project's own processor appends to its root stream meanwhile: look at the writer's events only.
    const since: StreamEvent[] = await stream.getEvents({ afterOffset: Number(before?.slice(0, 16)) });
    const written = since.filter((event) => event.source.principal === "ds-context-writer");
    expect(written.map((event) => event.type)).toEqual([MESSAGE]);
    expect(written[0]?.payload).toEqual(JSON.parse(forged));
    expect(written[0]?.source).toEqual({ principal: "ds-context-writer", origin: "/" });
  });

  test("bad input gets the protocol's status and changes nothing", async ({ os, admin, project, connect }) => {
    const { url, auth } = await setUp({ os, admin, project, connect }, "ds-bad");
    const path = unique();
    await fetch(url(path), { method: "PUT", headers: { ...auth, "content-type": "application/json" }, body: "[1]" });
    const json = { ...auth, "content-type": "application/json" };
    const cases: Array<[string, RequestInit, number]> = [
      ["?offset=12,3", { headers: auth }, 400],
      ["?offset=../x", { headers: auth }, 400],
      ["", { method: "POST", headers: json, body: "{not json" }, 400],
      ["", { method: "POST", headers: json, body: `${"[".repeat(40)}1${"]".repeat(40)}` }, 400],
      ["", { method: "POST", headers: json, body: `"${"x".repeat(600_000)}"` }, 413],
      ["", { method: "POST", headers: { ...json, "Producer-Id": "p", "Producer-Epoch": "1e3", "Producer-Seq": "0" }, body: "2" }, 400],
      ["", { method: "POST", headers: { ...json, "Producer-Id": "x".repeat(300), "Producer-Epoch": "0", "Producer-Seq": "0" }, body: "2" }, 400],
      ["", { method: "POST", headers: { ...auth, "content-type": "text/plain" }, body: "2" }, 409],
      ["", { method: "PUT", headers: { ...json, "Stream-TTL": "-5" } }, 400],
    ];
    for (const [query, init, status] of cases) {
      const response = await fetch(url(path) + query, init);
      expect(response.status, `${init.method ?? "GET"} ${query} ${JSON.stringify(init.headers)}`).toBe(status);
    }
    const after = await fetch(`${url(path)}?offset=-1`, { headers: auth });
    expect(await after.json()).toEqual([1]);
  });
});
