import { describe, expect } from "vitest";
import type { Handle } from "iterate/client";
import type { ProjectRoot, StreamEvent } from "iterate/types";
import { test } from "../harness/fixtures.ts";

const E = "events.iterate.com/";

/** The payload fields this test reads off the project's lifecycle facts. */
type Fact = StreamEvent<string, { attempt?: number; commit?: string }>;

async function allEvents(itx: Handle<ProjectRoot>): Promise<Fact[]> {
  const out: Fact[] = [];
  for (let afterOffset = 0; ; ) {
    const page = (await itx.getEvents({ afterOffset, limit: 500 })) as Fact[];
    const last = page.at(-1);
    if (last === undefined) return out;
    out.push(...page);
    afterOffset = last.offset;
  }
}

describe("project creation across a restart", () => {
  test("an OS killed (SIGKILL) mid-creation finishes the creation after its restart, with no duplicate facts", { timeout: 900_000 }, async ({ restartable }) => {
    const root = restartable.session().projects.get("mid-creation");
    // The request is recorded and the run starts; the OS dies before (or while) it works.
    expect(await root.create({ waitUntilCreated: false })).toEqual({ created: false });
    const { projectId } = await root.whoami();
    await restartable.kill();
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    await restartable.start();
    const session = restartable.session();
    const itx = restartable.project(projectId);
    await itx.waitForEvent({ type: `${E}project/created`, timeoutMs: 240_000 });
    // Creating again is a no-op that finds the project created.
    expect(await session.projects.get("mid-creation").create()).toEqual({ created: true });
    const events = await allEvents(itx);
    const count = (type: string) => events.filter((event) => event.type === `${E}${type}`).length;
    expect(count("project/create-requested")).toBe(1);
    expect(count("project/created")).toBe(1);
    expect(count("project/create-failed")).toBe(0);
    expect(count("project/worker-feed-installed")).toBe(1);
    expect(count("itx/created")).toBe(1);
    // An attempt cut off by the kill may be followed by another: each attempt's facts land once.
    const attempts = events.filter((event) => event.type === `${E}project/create-attempt-started`).map((event) => event.payload.attempt);
    expect(attempts).toEqual([...new Set(attempts)].toSorted());
    // One seed commit, whichever attempt made it, and one first worker-updated for it.
    const log = await itx.repo.log();
    expect(log).toHaveLength(1);
    const seedCommit = log[0]?.commit;
    const seeded = events.filter((event) => event.type === `${E}project/config-repo-seeded`);
    expect(seeded.every((event) => event.payload.commit === seedCommit)).toBe(true);
    expect(events.filter((event) => event.type === `${E}project/worker-updated` && event.payload.commit === seedCommit)).toHaveLength(1);
  });
});
