import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { listenOnLoopback } from "@iterate/e2e/harness/loopback-server";

/** Where Debian (and most distributions) install git's CGI smart-HTTP server. */
const GIT_HTTP_BACKEND = process.env.GIT_HTTP_BACKEND ?? "/usr/lib/git-core/git-http-backend";

export interface GitHttpPeer {
  /** The base URL: repositories are `${url}/<name>.git`. */
  url: string;
  close(): Promise<void>;
}

/**
 * The repos benchmark's peer: stock `git http-backend` (git's own smart-HTTP server) behind a
 * tiny CGI shim on 127.0.0.1, serving the bare repositories under `root`. Each request runs the
 * backend once, as a web server would.
 */
export async function startGitHttpPeer(root: string): Promise<GitHttpPeer> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const child = spawn(GIT_HTTP_BACKEND, [], {
      env: {
        PATH: process.env.PATH ?? "",
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        REQUEST_METHOD: request.method ?? "GET",
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: request.headers["content-type"] ?? "",
        REMOTE_ADDR: "127.0.0.1",
        REMOTE_USER: "bench",
        ...(request.headers["content-length"] ? { CONTENT_LENGTH: request.headers["content-length"] } : {}),
        ...(request.headers["content-encoding"] ? { HTTP_CONTENT_ENCODING: request.headers["content-encoding"] } : {}),
        ...(request.headers["git-protocol"] ? { GIT_PROTOCOL: String(request.headers["git-protocol"]) } : {}),
      },
    });
    request.pipe(child.stdin);
    // CGI output: headers, a blank line, the body.
    let head = Buffer.alloc(0);
    let started = false;
    child.stdout.on("data", (chunk: Buffer) => {
      if (started) {
        response.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      started = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      response.writeHead(status, headers);
      response.write(head.subarray(end + 4));
    });
    child.stdout.on("end", () => response.end());
    child.on("error", () => response.destroy());
  });
  const { origin, close } = await listenOnLoopback(server);
  return {
    url: origin,
    close,
  };
}
