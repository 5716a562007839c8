import { errorCode, errorMessage } from "iterate/errors";
import { hostStub } from "../capability-host/host-stub.ts";
import { logUncoded } from "../logging/log-limiter.ts";
import { findProject } from "../project/project-directory.ts";
import { DEFAULT_PROJECT_INGRESS_BASE } from "./project-ingress.ts";
import { withoutOsCredentials } from "./public-request.ts";

/**
 * HTTP to capabilities: a request for `{capability}--{project}.{base}` goes to that capability's
 * `fetch` on the project's root context, but only when it was provided with
 * `http: { expose: true }`; everything else is 404. Exposed capabilities are public: the request
 * carries no credentials into the platform. Locally the Host header selects the capability.
 */
export async function routeToCapability(request: Request, env: Env): Promise<Response | undefined> {
  const host = (request.headers.get("host") ?? new URL(request.url).host).split(":")[0]?.toLowerCase() ?? "";
  // One label under the ingress base, never some other host whose first label happens to hold `--`.
  const base = env.PROJECT_INGRESS_BASE ?? DEFAULT_PROJECT_INGRESS_BASE;
  if (!host.endsWith(`.${base}`)) return undefined;
  const label = host.slice(0, -(base.length + 1));
  if (label.includes(".")) return undefined;
  const separator = label.indexOf("--");
  if (separator <= 0) return undefined;
  const capability = label.slice(0, separator);
  const project = label.slice(separator + 2);
  const record = await findProject(env, project);
  if (!record) return notFound();
  try {
    const response = await hostStub(env, record.projectId, "/").invoke({
      path: [capability, "fetch"],
      args: [withoutOsCredentials(request)],
      caller: { principal: "public", origin: "/" },
      http: true,
    });
    if (response instanceof Response) return response;
    return Response.json({ code: "INTERNAL", message: `${capability}.fetch did not answer a Response` }, { status: 502 });
  } catch (error) {
    const code = errorCode(error);
    if (code === "NOT_FOUND" || code === "INVALID_ARGUMENT") return notFound();
    if (code !== undefined) return Response.json({ code, message: errorMessage(error) }, { status: code === "CAPABILITY_DISCONNECTED" ? 503 : 502 });
    // The caller is anyone on the internet: an uncoded message (a stack, a path, a provider's
    // internals) is for the log, not for them.
    logUncoded("an exposed capability failed to answer over HTTP", error);
    return Response.json({ code: "INTERNAL", message: "the capability failed to answer" }, { status: 502 });
  }
}

function notFound(): Response {
  return Response.json({ code: "NOT_FOUND", message: "no such route" }, { status: 404 });
}
