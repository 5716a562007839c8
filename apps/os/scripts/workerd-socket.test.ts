// node --test: findWorkerdSocket picks the socket that answers as the OS in a process that does
// not hold the public port (skipping the ports it is told to), and answers undefined when there is none.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { findWorkerdSocket } from "./workerd-socket.ts";

// A child process listening on loopback ports, each answering /health with the given JSON (or 404).
const SERVER = `
const http = require("node:http");
const answers = JSON.parse(process.argv[1]);
Promise.all(answers.map((answer) => new Promise((listening) => {
  const server = http.createServer((req, res) => {
    if (answer === null) { res.writeHead(404); res.end(); return; }
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify(answer));
  });
  server.listen(0, "127.0.0.1", () => listening(server.address().port));
}))).then((ports) => process.stdout.write(JSON.stringify(ports) + "\\n"));
`;

async function serve(answers: (object | null)[]): Promise<{ child: ChildProcess; ports: number[] }> {
  const child = spawn(process.execPath, ["-e", SERVER, JSON.stringify(answers)], { stdio: ["ignore", "pipe", "inherit"] });
  const [line] = (await once(child.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
  return { child, ports: JSON.parse(line.toString()) as number[] };
}

const OS = { ok: true, service: "iterate-os" };

test("the OS's socket in the process without the public port is found; the proxy's process is skipped", { skip: process.platform !== "linux" }, async () => {
  // The "proxy": holds the public port and forwards, so it answers as the OS on both of its ports.
  const proxy = await serve([OS, OS]);
  // The "OS workerd": an inspector-like port first, then the OS's own socket.
  const os = await serve([null, OS]);
  try {
    const publicPort = proxy.ports[0] as number;
    assert.equal(await findWorkerdSocket(process.pid, publicPort, "node"), `http://127.0.0.1:${os.ports[1]}`);
  } finally {
    proxy.child.kill();
    os.child.kill();
  }
});

test("ports to skip are not taken even when they answer as the OS (the bench's direct Worker socket)", { skip: process.platform !== "linux" }, async () => {
  const os = await serve([OS, OS]);
  try {
    assert.equal(await findWorkerdSocket(process.pid, 1, "node", [os.ports[0] as number]), `http://127.0.0.1:${os.ports[1]}`);
    assert.equal(await findWorkerdSocket(process.pid, 1, "node", os.ports), undefined);
  } finally {
    os.child.kill();
  }
});

test("nothing answering as the OS gives undefined (the caller keeps the public port)", { skip: process.platform !== "linux" }, async () => {
  const other = await serve([null, { service: "something-else" }]);
  try {
    assert.equal(await findWorkerdSocket(process.pid, 1, "node"), undefined);
    // Processes of another name are never probed.
    assert.equal(await findWorkerdSocket(process.pid, 1, "workerd"), undefined);
  } finally {
    other.child.kill();
  }
});
