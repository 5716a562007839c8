import { adminSession } from "./os.ts";

/** A fresh project for one test, created as admin. */
export async function newProject(prefix: string): Promise<{ projectId: string; slug: string }> {
  using session = adminSession();
  const slug = `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  // oxlint-disable-next-line typescript/no-explicit-any -- a project root is an itx: dynamic by design
  const itx: any = session.projects.create({ slug });
  const { projectId } = await itx.whoami();
  return { projectId, slug };
}
