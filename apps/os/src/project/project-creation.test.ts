import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, test } from "vitest";
import type { StreamEvent } from "iterate/types";
import { StreamRpcTarget, streamStub } from "../stream/stream-rpc-target.ts";
import { claimProject, mintProjectId } from "./project-directory.ts";
import { createProject, requestCreation } from "./project-lifecycle.ts";
import {
  PROJECT_CONFIG_REPO_SEEDED,
  PROJECT_CREATE_ATTEMPT_STARTED,
  PROJECT_CREATE_REQUESTED,
  PROJECT_CREATED,
  PROJECT_WORKER_FEED_INSTALLED,
  PROJECT_WORKER_PROBED,
  PROJECT_WORKER_UPDATED,
} from "./project-events.ts";

let counter = 0;
const slug = (what: string) => `${what}-${Date.now().toString(36)}-${++counter}`;

function root(projectId: string): StreamRpcTarget {
  return new StreamRpcTarget(streamStub(env.STREAM, `${projectId}:/`), { platform: "stream" });
}

async function projectEvents(projectId: string): Promise<StreamEvent[]> {
  return root(projectId).getEvents({ limit: 500 });
}

const STEPS = [PROJECT_CREATE_REQUESTED, PROJECT_CREATE_ATTEMPT_STARTED, PROJECT_CONFIG_REPO_SEEDED, PROJECT_WORKER_PROBED, PROJECT_WORKER_FEED_INSTALLED, PROJECT_CREATED, PROJECT_WORKER_UPDATED];

function host(projectId: string) {
  return env.PROJECT.getByName(`${projectId}:/`);
}

describe("project creation as a run", () => {
  test("create() waits for project/created; each step lands once, in order; the seed worker serves", async () => {
    const name = slug("made");
    const record = await createProject(env, name, "tester");
    const types = (await projectEvents(record.projectId)).map((event) => event.type).filter((type) => STEPS.includes(type));
    expect(types).toEqual(STEPS);
    const events = await projectEvents(record.projectId);
    const seeded = events.find((event) => event.type === PROJECT_CONFIG_REPO_SEEDED)?.payload as { commit: string };
    const updated = events.find((event) => event.type === PROJECT_WORKER_UPDATED)?.payload as { commit: string };
    expect(updated.commit).toBe(seeded.commit);
    // The root context was born before the project was created.
    expect(events.findIndex((event) => event.type === "events.iterate.com/itx/created")).toBeLessThan(events.findIndex((event) => event.type === PROJECT_CREATED));
    const response = await host(record.projectId).serveHttp(new Request("http://x/"));
    expect(response.status).toBe(200);
    expect(await response.text()).toContain(`Homepage of ${name}`);
  });

  test("waitUntilCreated: false answers before project/created, which lands later", async () => {
    const record = await createProject(env, slug("nowait"), "tester", undefined, { waitUntilCreated: false });
    const created = await root(record.projectId).waitForEvent({ type: PROJECT_CREATED, timeoutMs: 15_000 });
    expect(created.payload).toMatchObject({ projectId: record.projectId });
  });

  test("a project whose slug was claimed and nothing else is finished by requesting creation again", async () => {
    const record = { projectId: mintProjectId(), slug: slug("half") };
    await claimProject(env, record, "tester");
    expect(await projectEvents(record.projectId)).toEqual([]);
    await requestCreation(env, record, "tester");
    await requestCreation(env, record, "tester");
    const events = await projectEvents(record.projectId);
    expect(events.filter((event) => event.type === PROJECT_CREATED)).toHaveLength(1);
    expect(events.filter((event) => event.type === PROJECT_CREATE_REQUESTED)).toHaveLength(1);
  });

  test("a project without a certified worker answers 503, not someone else's page", async () => {
    const response = await host(mintProjectId()).serveHttp(new Request("http://x/"));
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: "UNAVAILABLE" });
  });

  // The host dies right after each step's fact lands; the run still finishes, and nothing is duplicated.
  test.each(STEPS.slice(1, 5))("a host aborted after %s resumes and finishes the run", async (step) => {
    const record = await createProject(env, slug("abort"), "tester", undefined, { waitUntilCreated: false });
    await root(record.projectId).waitForEvent({ type: step, timeoutMs: 15_000 });
    await runInDurableObject(host(record.projectId), (_instance, state) => state.abort("test: the host dies mid-creation")).catch(() => undefined);
    await root(record.projectId).waitForEvent({ type: PROJECT_CREATED, timeoutMs: 25_000 });
    const events = await projectEvents(record.projectId);
    for (const type of [PROJECT_CREATED, PROJECT_WORKER_UPDATED, PROJECT_WORKER_FEED_INSTALLED, PROJECT_CREATE_REQUESTED]) {
      expect(events.filter((event) => event.type === type), type).toHaveLength(1);
    }
    const response = await host(record.projectId).serveHttp(new Request("http://x/"));
    expect(response.status).toBe(200);
  }, 40_000);
});
