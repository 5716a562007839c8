// Node-only preload (`node --import ./worker-socket-preload.ts wrangler.js dev ...`): adds the
// direct socket named by ITERATE_WORKER_SOCKET to the Miniflare options of that process's
// `wrangler dev` (see worker-socket.ts, decision 0027). Only the bench's local OS is started with it.
import { installWorkerSocket, parseWorkerSocket, WORKER_SOCKET_ENV } from "./worker-socket.ts";

const socket = parseWorkerSocket(process.env[WORKER_SOCKET_ENV]);
if (socket === undefined) {
  console.error(`worker-socket-preload: ${WORKER_SOCKET_ENV} must be <worker>@<host>:<port>, got ${JSON.stringify(process.env[WORKER_SOCKET_ENV])}; no direct socket`);
} else {
  installWorkerSocket(socket);
}
