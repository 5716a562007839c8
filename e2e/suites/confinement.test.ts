import { describe, expect } from "vitest";
import type { Handle } from "iterate/client";
import { expectCode } from "iterate/stream/test-support";
import type { Session, StreamEvent } from "iterate/types";
import { newProject } from "../harness/projects.ts";
import { mounted, test } from "../harness/fixtures.ts";

/** A project root reached through a session, whether it exists, is forbidden, or not. */
type ProjectStub = ReturnType<Handle<Session>["projects"]["get"]>;

describe("per-project confinement", () => {
  test("every cross-project probe answers exactly like a project that does not exist", async ({ os, connect }) => {
    const mine = await newProject("mine");
    const theirs = await newProject("theirs");
    const owner = connect({ auth: os.admin, projectId: theirs.projectId });
    await owner.provideCapability({ name: "secretSauce", capability: () => "recipe" });

    const alice = connect({ auth: { type: "impersonate", secret: os.adminSecret, principal: "alice", projectIds: [mine.projectId] } });
    expect((await alice.projects.list()).map((project: { id: string }) => project.id)).toEqual([mine.projectId]);
    expect((await alice.projects.get(mine.projectId).whoami()).projectId).toBe(mine.projectId);

    const ghostId = "prj_aaaaaaaaaaaaaaaaaaaa";
    const probes: Array<[string, (project: ProjectStub) => Promise<unknown>]> = [
      ["whoami", (project) => project.whoami()],
      ["describe", (project) => project.__describe()],
      ["invoke", (project) => mounted<{ secretSauce(): string }>(project).secretSauce()],
      ["invokeCapability", (project) => project.invokeCapability({ path: ["secretSauce"], args: [] })],
      ["cd", (project) => project.cd("/agents/x").whoami()],
      ["extend", (project) => project.extend({ name: "sneak" })],
      ["streams", (project) => project.streams.get("/").getEvents({})],
      ["append", (project) => project.append({ type: "demo/sneaked" })],
      ["provide", (project) => project.provideCapability({ name: "trojan", capability: () => 1 })],
    ];
    for (const [name, probe] of probes) {
      for (const [label, key, ghost] of [
        ["id", theirs.projectId, ghostId],
        ["slug", theirs.slug, "no-such-project-slug"],
      ] as const) {
        const forbidden = await expectCode(probe(alice.projects.get(key)), "NOT_FOUND", `${name} by ${label}`);
        const missing = await expectCode(probe(alice.projects.get(ghost)), "NOT_FOUND", `${name} by ${label} (missing)`);
        expect(forbidden.message.replace(key, "<project>"), `${name} by ${label}`).toBe(missing.message.replace(ghost, "<project>"));
      }
    }
    // Nothing leaked into the other project.
    const events = (await owner.getEvents({ types: ["demo/sneaked", "events.iterate.com/itx/capability-provided"] })) as Array<StreamEvent<string, { path?: string[] }>>;
    expect(events.map((event) => event.payload.path)).toEqual([["secretSauce"]]);
  });

  test("a principal can reach the projects it creates in its own session", async ({ os, connect }) => {
    const bob = connect({ auth: { type: "impersonate", secret: os.adminSecret, principal: "bob", projectIds: [] } });
    const slug = `bobs-${Date.now().toString(36)}`;
    const itx = bob.projects.create({ slug });
    const { projectId } = await itx.whoami();
    expect((await bob.projects.list()).map((project: { id: string }) => project.id)).toEqual([projectId]);
  });
});
