// Node-only, Linux-only: finds the socket on which the OS's own workerd serves it, behind the
// port `wrangler dev` answers on. wrangler dev puts a proxy in front of every Worker (a second
// workerd whose ProxyWorker queues requests across reloads and forwards each one over HTTP, with a
// Durable Object hop and a message to wrangler's Node process). A deployment has no such proxy, so
// the benchmarks measure the OS at its own socket (decision 0025); nothing else uses this.
import { readFileSync, readdirSync, readlinkSync } from "node:fs";

/** The processes below `root` (its children, theirs, ...), with their command names. */
function descendants(root: number): { pid: number; comm: string }[] {
  const children = new Map<number, { pid: number; comm: string }[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // `pid (comm) state ppid ...`; comm may hold spaces and parentheses, so split at the last ")".
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const ppid = Number(stat.slice(close + 2).split(" ")[1]);
    const list = children.get(ppid) ?? [];
    list.push({ pid: Number(entry), comm });
    children.set(ppid, list);
  }
  const found: { pid: number; comm: string }[] = [];
  const queue = [root];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/** The loopback TCP ports `pid` listens on (from its socket inodes and /proc/net/tcp). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match?.[1]) inodes.add(match[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    // local_address is hex `IP:PORT` (IP little-endian), st 0A is LISTEN, field 9 the inode.
    const [address, port] = (fields[1] ?? "").split(":");
    if (address !== "0100007F" || fields[3] !== "0A" || !inodes.has(fields[9] ?? "")) continue;
    ports.push(parseInt(port ?? "", 16));
  }
  return ports;
}

/** Whether 127.0.0.1:`port` answers /health as the iterate OS. */
export async function answersAsOs(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2_000) });
    const body = (await response.json()) as { service?: unknown };
    return response.ok && body.service === "iterate-os";
  } catch {
    return false;
  }
}

/**
 * The URL of the OS's own workerd socket among the processes `wranglerPid` started (not the
 * proxy's `publicPort`, nor any of `skipPorts`), or undefined when none answers as the OS
 * (another platform, another wrangler layout): callers then use the public URL. `processName` is
 * for tests.
 */
export async function findWorkerdSocket(
  wranglerPid: number,
  publicPort: number,
  processName = "workerd",
  skipPorts: readonly number[] = [],
): Promise<string | undefined> {
  if (process.platform !== "linux") return undefined;
  for (const { pid, comm } of descendants(wranglerPid)) {
    if (comm !== processName) continue;
    const ports = listeningPorts(pid);
    // The proxy's workerd holds the public port: its other sockets are the proxy's own.
    if (ports.includes(publicPort)) continue;
    for (const port of ports) if (!skipPorts.includes(port) && (await answersAsOs(port))) return `http://127.0.0.1:${port}`;
  }
  return undefined;
}
