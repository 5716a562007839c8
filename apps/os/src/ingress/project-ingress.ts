import { findProject } from "../project/project-directory.ts";
import { withoutOsCredentials } from "./public-request.ts";

/** The host suffix project hosts sit under when the deployment names none: `<slug>.localhost`. */
export const DEFAULT_PROJECT_INGRESS_BASE = "localhost";

const SLUG_LABEL = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/** The project slug a Host names (`<slug>.<base>`, one label), or undefined for any other host. */
export function projectSlugOfHost(host: string, base: string): string | undefined {
  const name = host.split(":")[0]?.toLowerCase() ?? "";
  if (!name.endsWith(`.${base}`)) return undefined;
  const label = name.slice(0, -(base.length + 1));
  // `{capability}--{project}` is the capability ingress's form (capability-ingress.ts).
  if (label.includes(".") || label.includes("--") || !SLUG_LABEL.test(label) || label.length > 63) return undefined;
  return label;
}

/**
 * HTTP to a project's own worker: `http://<slug>.<base>/...` reaches the `fetch` of the worker
 * built from its `/repos/config`. The request carries no credentials into the platform; the worker
 * answers as the project's root. A project with no working worker answers 503, a slug with no
 * project 404: never another project's content.
 */
export async function routeToProjectWorker(request: Request, env: Env): Promise<Response | undefined> {
  const host = request.headers.get("host") ?? new URL(request.url).host;
  const slug = projectSlugOfHost(host, env.PROJECT_INGRESS_BASE ?? DEFAULT_PROJECT_INGRESS_BASE);
  if (slug === undefined) return undefined;
  // The directory first: an unknown slug must not make us wake (and allocate) a project's objects.
  const record = await findProject(env, slug);
  if (!record) return Response.json({ code: "NOT_FOUND", message: `no project ${slug}` }, { status: 404 });
  return env.PROJECT.getByName(`${record.projectId}:/`).serveHttp(withoutOsCredentials(request));
}
