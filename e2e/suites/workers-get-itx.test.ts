import { describe, expect } from "vitest";
import type { StreamEvent } from "iterate/types";
import { mounted, test } from "../harness/fixtures.ts";

/** What the workers below expose: `itx.workers.get` cannot know a loaded worker's methods. */
interface Notes {
  note(text: string): { path: string; offset: number };
  getItx(): unknown;
}
interface Tally {
  bump(): { n: number; path: string };
}
/** Calls the `whereami` source capability the last test mounts, from `context`. */
const whereami = (context: object) => mounted<{ whereami: { path(): string } }>(context).whereami.path();

// Loaded code reaches its context the SDK way: `this.getItx()` on the base classes of
// `iterate/worker`, which the OS resolves to its own SDK when it builds the source.
const files = {
  "src/index.ts": `import { IterateDurableObject, IterateEntrypoint } from "iterate/worker";

export default class Notes extends IterateEntrypoint<unknown, { tenant: string }> {
  async note(text: string): Promise<{ path: string; offset: number }> {
    using itx = this.getItx();
    const [event] = await itx.append({ type: "e2e/noted", payload: { text, tenant: this.ctx.props.tenant } });
    return { path: (await itx.whoami()).path, offset: event.offset };
  }
}

export class Tally extends IterateDurableObject {
  async bump(): Promise<{ n: number; path: string }> {
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS bumps(at TEXT)");
    this.ctx.storage.sql.exec("INSERT INTO bumps VALUES (datetime('now'))");
    const n = this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM bumps").one().n;
    using itx = this.getItx();
    await itx.append({ type: "e2e/bumped", payload: { n } });
    return { n, path: (await itx.whoami()).path };
  }
}`,
};

describe("this.getItx() in dynamic workers", () => {
  test("a stateless entrypoint reaches its ref's context and appends to its stream", { timeout: 120_000 }, async ({ project: { itx } }) => {
    const child = itx.extend({ name: "notes" });
    const noted = await mounted<Notes>(child.workers.get({ source: { files }, props: { tenant: "acme" } })).note("hello");
    expect(noted.path).toBe("/itx/notes");
    const events = await child.getEvents({ types: ["e2e/noted"] });
    expect(events).toEqual([
      expect.objectContaining({ offset: noted.offset, streamPath: "/itx/notes", payload: { text: "hello", tenant: "acme" }, source: expect.objectContaining({ origin: "/itx/notes" }) }),
    ]);
    expect(await itx.getEvents({ types: ["e2e/noted"] })).toEqual([]);
  });

  test("a durable object facet reaches the context that hosts it and keeps its own state", { timeout: 120_000 }, async ({ project: { itx } }) => {
    const child = itx.extend({ name: "tally" });
    const ref = { source: { files }, durableObject: { className: "Tally", key: "tally-1" } };
    expect(await mounted<Tally>(child.workers.get(ref)).bump()).toEqual({ n: 1, path: "/itx/tally" });
    expect(await mounted<Tally>(child.workers.get(ref)).bump()).toEqual({ n: 2, path: "/itx/tally" });
    expect((await child.getEvents({ types: ["e2e/bumped"] })).map((event: StreamEvent) => event.payload)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await itx.getEvents({ types: ["e2e/bumped"] })).toEqual([]);
  });

  test("a caller holding the worker cannot call getItx on it", { timeout: 120_000 }, async ({ project: { itx } }) => {
    await expect(mounted<Notes>(itx.workers.get({ source: { files }, props: { tenant: "x" } })).getItx()).rejects.toThrow(/getItx/);
  });

  test("a durable source capability's entrypoint reaches the calling context through this.getItx()", { timeout: 120_000 }, async ({ project: { itx } }) => {
    await itx.provideCapability({
      name: "whereami",
      capability: {
        type: "rpc",
        worker: {
          type: "source",
          source: {
            mainModule: "cap.js",
            modules: {
              "cap.js": `import { IterateEntrypoint } from "iterate/worker";
export default class extends IterateEntrypoint {
  async path() {
    using itx = this.getItx();
    return (await itx.whoami()).path;
  }
}`,
            },
          },
        },
      },
    });
    expect(await whereami(itx)).toBe("/");
    // Stateless sources run for the calling origin: an extension sees itself.
    expect(await whereami(itx.extend({ name: "caller" }))).toBe("/itx/caller");
  });
});
