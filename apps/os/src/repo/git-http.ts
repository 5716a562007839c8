import { errorCode, errorMessage } from "iterate/errors";
import { authenticate } from "../auth/authenticate.ts";
import { LIMITS } from "../limits.ts";
import { ProjectAccess } from "../project/project-collection.ts";
import { findProject } from "../project/project-directory.ts";
import { readGitBody, readPushBody } from "./git-request-body.ts";
import { advertisement, receivePack, uploadPackV2 } from "./git-service.ts";
import { parseRepoPath } from "./repo-names.ts";
import { repoStub } from "./repo-stub.ts";

/**
 * Stock git over smart HTTP at `/git/<project>/<repo path>[.git]/...`, for example
 * `git clone http://admin:<secret>@127.0.0.1:8787/git/my-project/repos/site.git`.
 * The password is the OS's own credential: the admin secret with user name `admin`, otherwise a
 * bearer token. Confinement is /api's: a repository of a project the credential cannot reach
 * answers exactly like one that does not exist.
 */
export async function serveGit(request: Request, env: Env): Promise<Response> {
  const url = new URL(request.url);
  // Bounded before anything else is looked at: the URL names the project and the repository.
  if (url.pathname.length > LIMITS.STREAM_PATH_MAX_LENGTH + 200) return missing();
  const match = /^\/git\/([^/]+)\/(.+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/.exec(url.pathname);
  if (!match) return missing();
  const [, project = "", rest = "", endpoint = ""] = match;
  const service = endpoint === "info/refs" ? url.searchParams.get("service") : endpoint;
  if (service !== "git-upload-pack" && service !== "git-receive-pack") return missing();
  if ((endpoint === "info/refs") !== (request.method === "GET" || request.method === "HEAD")) return plain(405, "method not allowed");

  const principal = await basicAuth(request, env);
  if (!principal) return unauthorized();
  let path: string;
  try {
    path = parseRepoPath(`/${decodeURIComponent(rest)}`);
  } catch {
    return missing();
  }
  const record = await findProject(env, decodeURIComponent(project));
  if (!record || !new ProjectAccess(principal).allows(record)) return missing();
  const repo = repoStub(env, record.projectId, path);
  const version2 = (request.headers.get("git-protocol") ?? "").split(":").includes("version=2");
  try {
    if (endpoint === "info/refs") {
      return gitResponse(`application/x-${service}-advertisement`, await advertisement(repo, service, version2));
    }
    const expected = `application/x-${service}-request`;
    if (request.headers.get("content-type") !== expected) return plain(415, `expected ${expected}`);
    if (service === "git-upload-pack") {
      const body = await readGitBody(request, LIMITS.GIT_HTTP_NEGOTIATION_MAX_BYTES, "GIT_HTTP_NEGOTIATION_MAX_BYTES");
      return gitResponse("application/x-git-upload-pack-result", await uploadPackV2(repo, body));
    }
    const body = await readPushBody(request);
    try {
      return gitResponse("application/x-git-receive-pack-result", await receivePack(repo, body, { principal: principal.id, origin: "/" }));
    } finally {
      body.release();
    }
  } catch (error) {
    const code = errorCode(error);
    if (code === "NOT_FOUND") return missing();
    if (code === undefined) throw error;
    return plain(code === "INVALID_ARGUMENT" ? 400 : 503, `[${code}] ${errorMessage(error)}`);
  }
}

/** The principal of an HTTP Basic credential, or undefined (bad, missing or oversized). */
async function basicAuth(request: Request, env: Env) {
  const header = request.headers.get("authorization") ?? "";
  // Base64 of "user:password", each at most a credential's length.
  if (!header.startsWith("Basic ") || header.length > 6 + Math.ceil(((LIMITS.CREDENTIAL_STRING_MAX_LENGTH + 1) * 2) / 3) * 4) return undefined;
  let decoded: string;
  try {
    decoded = atob(header.slice(6));
  } catch {
    return undefined;
  }
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  const user = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  const credentials = user === "admin" ? { type: "admin-secret", secret: password } : { type: "bearer", token: password };
  try {
    return (await authenticate(env, credentials)).principal;
  } catch (error) {
    if (errorCode(error) === "UNAUTHENTICATED") return undefined;
    throw error;
  }
}

function gitResponse(type: string, body: Uint8Array | ReadableStream<Uint8Array>): Response {
  return new Response(body, { headers: { "content-type": type, "cache-control": "no-cache" } });
}

function missing(): Response {
  return plain(404, "repository not found");
}

function unauthorized(): Response {
  return new Response("authentication required: the admin secret (user admin) or a bearer token as the password\n", {
    status: 401,
    headers: { "www-authenticate": 'Basic realm="iterate"', "content-type": "text/plain" },
  });
}

function plain(status: number, text: string): Response {
  return new Response(`${text}\n`, { status, headers: { "content-type": "text/plain" } });
}
