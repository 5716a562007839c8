import { connectItx, type Handle } from "iterate/client";
import type { ProjectRoot } from "iterate/types";
import { adminSession, target } from "./os.ts";

/** A fresh project for one test, created as admin. */
export async function newProject(prefix: string): Promise<{ projectId: string; slug: string }> {
  using session = adminSession();
  const slug = `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  const { projectId } = await session.projects.create({ slug }).whoami();
  return { projectId, slug };
}

/**
 * A fresh project's root context, connected as admin, for set-up shared by a file's tests
 * (`beforeAll`); a single test takes the `project` fixture instead. `Mounted` types the
 * capabilities the suite provides on it. Dispose it (`using`, or in `afterAll`).
 */
export async function projectItx<Mounted extends object = {}>(prefix: string): Promise<Handle<ProjectRoot & Mounted>> {
  const { projectId } = await newProject(prefix);
  const { baseUrl, admin } = target();
  return connectItx<Mounted>({ baseUrl, auth: admin, projectId });
}
