import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { ensureContext } from "../itx/context-lifecycle.ts";
import { seedRepository } from "./repo-seed.ts";

const caller = { principal: "admin", origin: "/" };

async function project(): Promise<string> {
  const projectId = `prj_seed${crypto.randomUUID().replaceAll("-", "")}`;
  await ensureContext(env, { projectId, path: "/", name: "test", parent: null, ancestors: [], caller });
  return projectId;
}

const seed = (projectId: string, path: string) =>
  seedRepository(env, { projectId, path, caller, branch: "main", message: "seed", files: { "README.md": "hello\n" } });

describe("seedRepository", () => {
  test("seeds once: a repeat answers the same commit and commits nothing", async () => {
    const projectId = await project();
    const first = await seed(projectId, "/repos/seeded");
    expect(first.committed).toBe(true);
    const again = await seed(projectId, "/repos/seeded");
    expect(again).toEqual({ commit: first.commit, committed: false });
  });

  test("refuses a path whose context was born under another parent (not-root-born)", async () => {
    const projectId = await project();
    await ensureContext(env, { projectId, path: "/repos", name: "repos", parent: "/", ancestors: ["/"], caller });
    await ensureContext(env, { projectId, path: "/repos/taken", name: "taken", parent: "/repos", ancestors: ["/", "/repos"], caller: { principal: "admin", origin: "/repos" } });
    await expect(seed(projectId, "/repos/taken")).rejects.toMatchObject({ code: "PERMISSION_DENIED", details: { reason: "not-root-born" } });
  });
});
