import { describe, expect, test } from "vitest";
import { connectItx } from "iterate/client";
import { target } from "../harness/os.ts";
import { newProject } from "../harness/projects.ts";
import { expectCode } from "iterate/stream/test-support";

// oxlint-disable typescript/no-explicit-any -- probes walk dynamic paths on purpose

describe("per-project confinement", () => {
  test("every cross-project probe answers exactly like a project that does not exist", async () => {
    const mine = await newProject("mine");
    const theirs = await newProject("theirs");
    const { baseUrl, admin, adminSecret } = target();
    using owner: any = connectItx({ baseUrl, auth: admin, projectId: theirs.projectId });
    await owner.provideCapability({ name: "secretSauce", capability: () => "recipe" });

    using alice: any = connectItx({
      baseUrl,
      auth: { type: "impersonate", secret: adminSecret, principal: "alice", projectIds: [mine.projectId] },
    });
    expect((await alice.projects.list()).map((project: { id: string }) => project.id)).toEqual([mine.projectId]);
    expect((await alice.projects.get(mine.projectId).whoami()).projectId).toBe(mine.projectId);

    const ghostId = "prj_aaaaaaaaaaaaaaaaaaaa";
    const probes: Array<[string, (project: any) => Promise<unknown>]> = [
      ["whoami", (project) => project.whoami()],
      ["describe", (project) => project.__describe()],
      ["invoke", (project) => project.secretSauce()],
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
    const events = await owner.getEvents({ types: ["demo/sneaked", "events.iterate.com/itx/capability-provided"] });
    expect(events.map((event: { payload: { path?: string[] } }) => event.payload.path)).toEqual([["secretSauce"]]);
  });

  test("a principal can reach the projects it creates in its own session", async () => {
    const { baseUrl, adminSecret } = target();
    using bob: any = connectItx({ baseUrl, auth: { type: "impersonate", secret: adminSecret, principal: "bob", projectIds: [] } });
    const slug = `bobs-${Date.now().toString(36)}`;
    const itx = bob.projects.create({ slug });
    const { projectId } = await itx.whoami();
    expect((await bob.projects.list()).map((project: { id: string }) => project.id)).toEqual([projectId]);
  });
});
