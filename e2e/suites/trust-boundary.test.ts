import { describe, expect } from "vitest";
import { withItx, type Handle } from "iterate/client";
import { expectCode } from "iterate/stream/test-support";
import type { ProjectRoot, Session } from "iterate/types";
import { newProject } from "../harness/projects.ts";
import { mounted, test } from "../harness/fixtures.ts";

/** A project root reached through a session, whether it exists, is forbidden, or not. */
type ProjectStub = ReturnType<Handle<Session>["projects"]["get"]>;

const E = "events.iterate.com";

/** Every event type a platform contract folds as authority, plus the platform's own facts. */
const CONTROL_TYPES = [
  "itx/subscription-configured",
  "itx/created",
  "itx/capability-provided",
  "itx/capability-revoked",
  "itx/capability-disconnected",
  "itx/run-settled",
  "itx/loop-limit",
  "agent/created",
  "agent/configured",
  "agent/llm-request-requested",
  "agent/llm-request-settled",
  "agent/llm-response-frame",
  "agent/message-sent",
  "agent/loop-stopped",
  "agent/listed",
  "project/create-requested",
  "project/created",
  "project/slug-claimed",
  "project/id-claimed",
  "secret/set",
  "secret/used",
  "token/issued",
  "token/revoked",
  "repo/commit-completed",
  "scheduler/schedule-set",
  "itx/schedule-set",
  "itx/schedule-cancelled",
  "itx/schedule-fired",
  "itx/schedule-failed",
].map((type) => `${E}/${type}`);

const STREAMS = ["/", "/itx/child", "/secrets/key", "/agents", "/agents/helper"];

/**
 * Waits until B's own project worker has handled its creation and its first start (it makes the
 * onboarding agent and sets the heartbeat schedule, then records each delivery). Those writes are
 * B's own and land whenever the worker gets to them: a digest taken before would see them as changes.
 */
async function workerAtRest(owner: Handle<ProjectRoot>): Promise<void> {
  for (const type of ["project/created", "project/worker-updated"]) {
    const event = await owner.waitForEvent({ type: `${E}/${type}`, timeoutMs: 60_000 });
    await owner.waitForEvent({ type: `${E}/project/worker-event-delivered`, payload: { offset: event.offset }, timeoutMs: 60_000 });
  }
}

/** Everything a reader of project B can see: its streams' events and its contexts' inventories. */
async function digest(owner: Handle<ProjectRoot>): Promise<string> {
  const streams = await Promise.all(STREAMS.map(async (path) => [path, await (await owner.streams.get(path)).getEvents({ limit: 500 })]));
  const described = await Promise.all(["/", "/itx/child"].map(async (path) => [path, await owner.cd(path).__describe()]));
  return JSON.stringify({ streams, described });
}

describe("the trust boundary between projects", () => {
  test("a bearer token confined to A changes nothing in B: control events, built-ins, scripts, workers, agents, secrets", async ({ os, admin: session, connect }) => {
    const a = await newProject("trust-a");
    const b = await newProject("trust-b");
    const owner = connect<{ after(): string }>({ auth: os.admin, projectId: b.projectId });
    await owner.provideCapability({ name: "secretSauce", capability: () => "recipe" });
    await owner.extend({ path: "/itx/child" });
    await owner.secrets.get("/secrets/key").update({ material: "sk-trust-b-material", egress: { urls: ["http://127.0.0.1:9/"] } });
    await owner.agents.get("/agents/helper").create({ llm: { provider: "openai-compatible", baseUrl: "http://127.0.0.1:9/v1", model: "m" } });
    await workerAtRest(owner);
    const before = await digest(owner);

    const { token } = await session.issueToken({ principal: "mallory", projectIds: [a.slug], ttlSeconds: 600 });
    using mine = withItx({ baseUrl: os.baseUrl, token, context: a.slug });
    expect((await mine.whoami()).projectId).toBe(a.projectId);

    // 1. Subscription rows naming B's hosts (or the deployment's), on A's own streams.
    for (const [binding, host] of [
      ["CAPABILITY_HOST", `${b.projectId}:/`],
      ["AGENT", `${b.projectId}:/agents/helper`],
      ["CAPABILITY_HOST", "__null__:/"],
      ["CAPABILITY_HOST", `${a.projectId}:/`],
    ]) {
      const row = { type: `${E}/itx/subscription-configured`, payload: { key: "core", subscription: { type: "processor", binding, host, processor: "core" } } };
      await expectCode(mine.append({ type: "demo/padding" }, row), "PERMISSION_DENIED", host);
      await expectCode(mine.cd("/elsewhere").append(row), "PERMISSION_DENIED", host);
    }
    // 2. Every control type, directly, through cd, and through a script.
    for (const type of CONTROL_TYPES) {
      await expectCode(mine.append({ type, payload: {} }), "PERMISSION_DENIED", type);
    }
    const fromScript = await mine.run(`async (itx) => {
      const refused = [];
      for (const type of ${JSON.stringify(CONTROL_TYPES)}) {
        try { await itx.cd("/x").append({ type, payload: {} }); } catch (error) { refused.push(type); }
      }
      return refused;
    }`);
    expect(fromScript).toEqual(CONTROL_TYPES);
    // 3. B by id and by slug answers exactly like a project that does not exist, on every road.
    const ghostId = "prj_aaaaaaaaaaaaaaaaaaaa";
    const probes: Array<[string, (project: ProjectStub) => Promise<unknown>]> = [
      ["whoami", (project) => project.whoami()],
      ["describe", (project) => project.__describe()],
      ["invoke", (project) => mounted<{ secretSauce(): string }>(project).secretSauce()],
      ["append", (project) => project.append({ type: "demo/sneaked" })],
      ["cd", (project) => project.cd("/itx/child").append({ type: "demo/sneaked" })],
      ["extend", (project) => project.extend({ name: "sneak" })],
      ["provide", (project) => project.provideCapability({ name: "trojan", capability: () => 1 })],
      ["host", (project) => project.capabilityHosts.get("/").provideCapability({ name: "trojan", capability: () => 1 })],
      ["run", (project) => project.run("async (itx) => itx.whoami()")],
      ["streams", (project) => project.streams.get("/").getEvents({})],
      ["agents", (project) => project.agents.get("/agents/helper").message("obey me")],
      ["secrets", (project) => project.secrets.get("/secrets/key").update({ material: "x", egress: { urls: ["http://127.0.0.1:9/"] } })],
      ["scheduler", (project) => project.scheduler.set({ key: "sneak", every: 1, script: "async (itx) => itx.append({ type: 'demo/sneaked' })" })],
      ["scheduler list", (project) => project.scheduler.list()],
      ["workers", (project) => mounted<{ fetch(url: string): Response }>(project.workers.get({ source: { files: { "index.js": "export default { fetch() { return new Response('x') } }" } } })).fetch("http://x/")],
    ];
    const root = connect({ auth: { type: "bearer", token } });
    for (const [name, probe] of probes) {
      for (const [label, key, ghost] of [
        ["id", b.projectId, ghostId],
        ["slug", b.slug, "no-such-project-slug"],
      ] as const) {
        const forbidden = await expectCode(probe(root.projects.get(key)), "NOT_FOUND", `${name} by ${label}`);
        const missing = await expectCode(probe(root.projects.get(ghost)), "NOT_FOUND", `${name} by ${label} (missing)`);
        expect(forbidden.message.replace(key, "<project>"), `${name} by ${label}`).toBe(missing.message.replace(ghost, "<project>"));
      }
    }
    // 4. Nothing in B changed, and B's root host still folds B (its checkpoint was not moved).
    expect(JSON.parse(await digest(owner))).toEqual(JSON.parse(before));
    await owner.provideCapability({ name: "after", capability: () => "still mine" });
    expect(await owner.after()).toBe("still mine");
    // Slug existence is public (as on most platforms); nothing else about B is.
    const taken = await expectCode(root.projects.create({ slug: b.slug }), "INVALID_ARGUMENT");
    expect(taken.message).toContain("is taken");
    expect(taken.message).not.toContain(b.projectId);
  });
});
