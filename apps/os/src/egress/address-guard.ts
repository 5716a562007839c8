// Shared by the OS's pipe and the runner's direct road (runner/direct-egress.ts): the runner is
// loaded without a bundler, so this module imports nothing and refuses by value, not by throwing.

/**
 * Which private destinations a deployment lets egress reach. From `EGRESS_ALLOW_PRIVATE_ADDRESSES`:
 * unset, "" or "0" allows none; "loopback" allows this machine only, spelled 127.0.0.1, [::1] or
 * localhost (the local OS's default: your own servers, never your network); "1" or "true" allows
 * all private addresses; otherwise a comma list of hosts (names or literal addresses) that are
 * allowed although private.
 */
export type PrivateAddressPolicy = { kind: "none" } | { kind: "all" } | { kind: "hosts"; hosts: ReadonlySet<string> };

/** The hosts the "loopback" policy allows: the canonical spellings of this machine, nothing else. */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["127.0.0.1", "::1", "localhost"]);

export function privateAddressPolicy(value: string | undefined): PrivateAddressPolicy {
  const text = (value ?? "").trim().toLowerCase();
  if (text === "" || text === "0" || text === "false") return { kind: "none" };
  if (text === "1" || text === "true") return { kind: "all" };
  if (text === "loopback") return { kind: "hosts", hosts: LOOPBACK_HOSTS };
  return { kind: "hosts", hosts: new Set(text.split(",").map((host) => host.trim()).filter(Boolean)) };
}

// Names that only ever mean something inside a private network.
const PRIVATE_NAME_SUFFIXES = [".localhost", ".local", ".internal", ".intranet", ".lan", ".home.arpa", ".corp", ".private"];
const PRIVATE_NAMES = new Set(["localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", "metadata.google.internal"]);

/** A destination the guard refuses: the host as it was judged and why. */
export interface DestinationRefusal {
  host: string;
  reason: string;
}

/**
 * Refuses loopback, private, link-local, CGNAT, documentation, benchmark, multicast, reserved and
 * IPv4-mapped, -translated and -embedding IPv6 destinations, by literal address and by name, and
 * names with empty labels (`localhost..`, `vm..`, `a..b`). An allowed host must match the policy
 * exactly as written: `localhost.` or `[::ffff:127.0.0.1]` is not `localhost` or `127.0.0.1`.
 * This judges the URL only; a name that resolves to a private address is refused after
 * resolution by the network filter of the process that connects (`networkFilterOf` for the
 * runner; the platform's own network in a deployment). Answers the refusal, or undefined.
 */
export function destinationRefusal(url: URL, policy: PrivateAddressPolicy): DestinationRefusal | undefined {
  if (policy.kind === "all") return undefined;
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (policy.kind === "hosts" && policy.hosts.has(host)) return undefined;
  const reason = privateReason(host);
  return reason ? { host, reason } : undefined;
}

/**
 * The allow and deny lists of a workerd network service that enforces `policy` on the address a
 * name resolved to, at connect time: what a URL check cannot see (a public-looking name whose DNS
 * answer is 127.0.0.1 or 10.x). Undefined for a policy of named hosts, whose addresses are not
 * known here: a process with that policy sends nothing itself (the OS's pipe sends for it).
 */
export function networkFilterOf(policy: PrivateAddressPolicy): { allow: string[]; deny: string[] } | undefined {
  if (policy.kind === "all") return { allow: ["public", "private", "local"], deny: [] };
  if (policy.kind === "none") return { allow: ["public"], deny: ["private", "local"] };
  if (policy.hosts === LOOPBACK_HOSTS) return { allow: ["public", "127.0.0.1/32", "::1/128"], deny: [] };
  return undefined;
}

/** Why a host is private (or malformed), or undefined when it is public. */
export function privateReason(host: string): string | undefined {
  if (host === "" || host.startsWith(".") || host.includes("..")) return "a name with an empty label";
  // One trailing dot is the DNS root (`example.com.` is `example.com`); more were refused above.
  const name = host.replace(/\.$/, "");
  if (PRIVATE_NAMES.has(name) || PRIVATE_NAME_SUFFIXES.some((suffix) => name.endsWith(suffix))) return "a private name";
  const v4 = parseIPv4(name);
  if (v4 !== undefined) return ipv4Reason(v4);
  if (name.includes(":")) return ipv6Reason(name);
  if (!name.includes(".")) return "a single-label name resolves only inside a private network";
  return undefined;
}

const V4_RANGES: Array<[number, number, number, number, number, string]> = [
  [0, 0, 0, 0, 8, "this network"],
  [10, 0, 0, 0, 8, "private (10/8)"],
  [100, 64, 0, 0, 10, "carrier-grade NAT (100.64/10)"],
  [127, 0, 0, 0, 8, "loopback"],
  [169, 254, 0, 0, 16, "link-local"],
  [172, 16, 0, 0, 12, "private (172.16/12)"],
  [192, 0, 0, 0, 24, "IETF protocol assignments"],
  [192, 0, 2, 0, 24, "documentation (TEST-NET-1)"],
  [192, 88, 99, 0, 24, "6to4 relay"],
  [192, 168, 0, 0, 16, "private (192.168/16)"],
  [198, 18, 0, 0, 15, "benchmarking"],
  [198, 51, 100, 0, 24, "documentation (TEST-NET-2)"],
  [203, 0, 113, 0, 24, "documentation (TEST-NET-3)"],
  [224, 0, 0, 0, 4, "multicast"],
  [240, 0, 0, 0, 4, "reserved"],
];

function ipv4Reason(address: number): string | undefined {
  for (const [a, b, c, d, bits, reason] of V4_RANGES) {
    const base = ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    if ((address & mask) >>> 0 === base) return reason;
  }
  return undefined;
}

function parseIPv4(text: string): number | undefined {
  const parts = text.split(".");
  if (parts.length !== 4 || parts.some((part) => !/^\d{1,3}$/.test(part) || Number(part) > 255)) return undefined;
  return parts.reduce((value, part) => ((value << 8) | Number(part)) >>> 0, 0);
}

function ipv6Reason(text: string): string | undefined {
  const groups = expandIPv6(text);
  if (!groups) return "not a valid IPv6 address";
  const [g0, , , , g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  if (groups.every((group) => group === 0)) return "unspecified address";
  if (groups.slice(0, 7).every((group) => group === 0) && g7 === 1) return "loopback";
  if (groups.slice(0, 5).every((group) => group === 0) && g5 === 0xffff) return "IPv4-mapped IPv6";
  // ::ffff:0:a.b.c.d (SIIT, RFC 2765) reaches the embedded IPv4 address on stacks that translate it.
  if (groups.slice(0, 4).every((group) => group === 0) && g4 === 0xffff && g5 === 0) return "IPv4-translated IPv6";
  if (groups.slice(0, 6).every((group) => group === 0)) return "IPv4-compatible IPv6";
  // NAT64: the well-known prefix embeds an IPv4 address, judged as that address; the rest of
  // 64:ff9b::/32 (the local-use 64:ff9b:1::/48 of RFC 8215 included) is the operator's own network.
  if (g0 === 0x64 && groups[1] === 0xff9b) {
    if (groups.slice(2, 6).every((group) => group === 0)) return ipv4Reason(((g6 << 16) | g7) >>> 0) ?? undefined;
    return groups[2] === 1 ? "local-use NAT64 (64:ff9b:1::/48)" : "NAT64 outside the well-known prefix (64:ff9b::/96)";
  }
  if (g0 === 0x2001 && groups[1] === 0) return "Teredo (2001::/32) embeds an IPv4 address";
  if ((g0 & 0xfe00) === 0xfc00) return "unique local (fc00::/7)";
  if ((g0 & 0xffc0) === 0xfe80) return "link-local (fe80::/10)";
  if ((g0 & 0xffc0) === 0xfec0) return "site-local (fec0::/10)";
  if ((g0 & 0xff00) === 0xff00) return "multicast";
  if (g0 === 0x2001 && groups[1] === 0x0db8) return "documentation (2001:db8::/32)";
  if (g0 === 0x2002) return "6to4";
  if (g0 === 0x0100 && groups.slice(1, 4).every((group) => group === 0)) return "discard-only (100::/64)";
  return undefined;
}

function expandIPv6(text: string): number[] | undefined {
  let address = text.split("%")[0] ?? "";
  // An embedded dotted IPv4 tail becomes two groups.
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (tail) {
    const v4 = parseIPv4(tail[1] as string);
    if (v4 === undefined) return undefined;
    address = `${address.slice(0, -(tail[1] as string).length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = address.split("::");
  if (halves.length > 2) return undefined;
  const head = parseGroups(halves[0] ?? "");
  const rest = halves.length === 2 ? parseGroups(halves[1] ?? "") : [];
  const groups = halves.length === 2 ? [...head, ...Array(8 - head.length - rest.length).fill(0), ...rest] : head;
  if (groups.length !== 8 || groups.some((group) => Number.isNaN(group))) return undefined;
  return groups;
}

function parseGroups(part: string): number[] {
  return part === "" ? [] : part.split(":").map((group) => (/^[0-9a-f]{1,4}$/.test(group) ? parseInt(group, 16) : Number.NaN));
}
