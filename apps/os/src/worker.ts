import { ItxError } from "iterate/errors";
import { serveCapnWeb } from "./api/api-route.ts";
import { UnauthenticatedRootRpcTarget } from "./api/unauthenticated-root.ts";
import { routeToCapability } from "./ingress/capability-ingress.ts";
import { routeToProjectWorker } from "./ingress/project-ingress.ts";
import { codedErrorResponse } from "./api/coded-response.ts";
import { serveGit } from "./repo/git-http.ts";
import { serveBrowserAuth } from "./auth/browser-sign-in.ts";
import { handshakeOf } from "./auth/handshake.ts";
import { serveDashboard } from "./dashboard-assets.ts";
import { STREAMS_ROUTE_PREFIX, serveStreams } from "./streams-http/streams-route.ts";
import { serveProjectMcp } from "./mcp/project-mcp-route.ts";
import { privateAddressPolicy } from "./egress/address-guard.ts";
import { refusesEgressMark } from "./egress/egress-rules.ts";
import { publicSecretRefusal } from "./auth/public-secret-guard.ts";

export { StreamDurableObject } from "./stream/stream-durable-object.ts";
export { CapabilityHostDurableObject } from "./capability-host/capability-host-durable-object.ts";
export { EgressEntrypoint, ItxEntrypoint } from "./worker-loader/loopback-entrypoints.ts";
export { RunnerCallbackEntrypoint } from "./worker-loader/loopback-entrypoints.ts";
export { SecretDurableObject } from "./secret/secret-durable-object.ts";
export { AgentDurableObject } from "./agent/agent-durable-object.ts";
export { RepoDurableObject } from "./repo/repo-durable-object.ts";
export { SchedulerDurableObject } from "./scheduler/scheduler-durable-object.ts";
export { ProjectDurableObject } from "./project/project-durable-object.ts";
export { UserProcessorDurableObject } from "./processor/user-processor-durable-object.ts";

/** The stateless OS Worker: routes HTTP, terminates Cap'n Web at /api, holds no state of its own. */
export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    try {
      return await route(request, env, ctx);
    } catch (error) {
      // Never the runtime's error page: it would show a stack and file paths to whoever asked.
      return codedErrorResponse(error, "uncaught error serving a request");
    }
  },
} satisfies ExportedHandler<Env>;

async function route(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  const url = new URL(request.url);
  const routed = (await routeToCapability(request, env)) ?? (await routeToProjectWorker(request, env));
  if (routed) return routed;
  // Project hosts above are public; the OS's own routes, but for /health (no credential, nothing
  // to read), are not for code the OS runs (egress-rules.ts).
  if (url.pathname !== "/health" && refusesEgressMark(request.headers, privateAddressPolicy(env.EGRESS_ALLOW_PRIVATE_ADDRESSES))) {
    throw new ItxError("PERMISSION_DENIED", "a request sent by code this OS runs (its egress) does not reach the OS's own routes: use itx instead");
  }
  const refusal = url.pathname === "/health" ? undefined : publicSecretRefusal(request, env.ITERATE_ADMIN_SECRET);
  if (refusal !== undefined) {
    throw new ItxError("PERMISSION_DENIED", `this OS runs with the public local admin secret, so it answers only this machine's own clients: ${refusal} (set ITERATE_ADMIN_SECRET to serve others)`);
  }
  if (url.pathname.startsWith("/git/")) return serveGit(request, env);
  if (url.pathname.startsWith(STREAMS_ROUTE_PREFIX)) return serveStreams(request, env, ctx);
  const mcp = await serveProjectMcp(request, env);
  if (mcp) return mcp;
  switch (url.pathname) {
    case "/api":
      return serveCapnWeb(request, ctx, (connection) => new UnauthenticatedRootRpcTarget(env, connection, handshakeOf(request)));
    case "/auth/sign-in":
      return serveBrowserAuth(request, env, "sign-in");
    case "/auth/sign-out":
      return serveBrowserAuth(request, env, "sign-out");
    case "/health":
      return Response.json({ ok: true, service: "iterate-os", api: "/api", streams: "/streams/<project>/<stream path>" });
    default:
      return (await serveDashboard(request, env)) ?? notFound();
  }
}

function notFound(): Response {
  return Response.json({ code: "NOT_FOUND", message: "no such route" }, { status: 404 });
}
