import { connectItx } from "iterate/client";
import { adminSession, target } from "./os.ts";

/** A fresh project for one test, created as admin. */
export async function newProject(prefix: string): Promise<{ projectId: string; slug: string }> {
  using session = adminSession();
  const slug = `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  // oxlint-disable-next-line typescript/no-explicit-any -- a project root is an itx: dynamic by design
  const itx: any = session.projects.create({ slug });
  const { projectId } = await itx.whoami();
  return { projectId, slug };
}

/** A fresh project's root context, connected as admin. Dispose it (`using`). */
// oxlint-disable-next-line typescript/no-explicit-any -- an itx is dynamic by design
export async function projectItx(prefix: string): Promise<any> {
  const { projectId } = await newProject(prefix);
  const { baseUrl, admin } = target();
  return connectItx({ baseUrl, auth: admin, projectId });
}
