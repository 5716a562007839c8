/**
 * The limits of the open protocols' HTTP routes (Durable Streams at /streams, MCP at /mcp, OpenAPI
 * clients): a group of the one registry, which `LIMITS` (limits.ts) spreads in with the others.
 * Nothing imports this file but limits.ts.
 */
export const PROTOCOL_LIMITS = {
  // ---- Durable Streams over HTTP (/streams) ----
  /**
   * Bytes of one Durable Streams request body (PUT or POST at /streams): read whole before it is
   * parsed, so it bounds what one request can make the Worker hold. Larger bodies get 413.
   */
  STREAMS_HTTP_BODY_MAX_BYTES: 524_288,
  /**
   * Nesting of one JSON message over HTTP (the batch array not counted): checked before
   * JSON.parse, so a hostile body cannot make parsing recurse deeply. Same depth as a payload.
   */
  STREAMS_HTTP_JSON_MAX_DEPTH: 32,
  /**
   * Messages in one JSON-mode body: each is an event written in the same Durable Object turn (a
   * body of 512 KiB can hold 262,000 `1`s, which held the Worker's thread for most of a second).
   * A batch of more is several requests.
   */
  STREAMS_HTTP_BODY_MAX_MESSAGES: 10_000,
  /** How long a /streams request body may take to arrive (a client trickling bytes gets 408, as MCP's 30 s). */
  STREAMS_HTTP_BODY_READ_TIMEOUT_MS: 30_000,
  /** Characters of any one Durable Streams header or query value (content type, Stream-Seq, producer id, cursor, If-None-Match). */
  STREAMS_HTTP_HEADER_MAX_LENGTH: 256,
  /** Events in one read response: bounds the page the Stream builds; clients read on from Stream-Next-Offset. */
  STREAMS_HTTP_READ_PAGE_EVENTS: 50_000,
  /** Stored payload bytes in one read response (at least one event is always answered). */
  STREAMS_HTTP_READ_PAGE_BYTES: 4_194_304,
  /** Raw bytes per stored chunk of a byte-mode body: base64 keeps a chunk under the event size limit. */
  STREAMS_HTTP_BYTES_CHUNK: 131_072,
  /** Longest Stream-TTL accepted, in seconds (ten years): larger values would overflow date arithmetic. */
  STREAMS_HTTP_TTL_MAX_SECONDS: 315_360_000,
  /**
   * Long-poll and SSE readers one stream keeps waiting for news at once (as LIVE_SUBSCRIBERS_MAX
   * does for Cap'n Web): each holds a request open and is woken, and reads, on every append. One
   * more is answered 503 with Retry-After.
   */
  STREAMS_HTTP_LIVE_WAITERS_MAX: 256,
  /**
   * Long-polls and SSE responses one Worker isolate holds open across all streams (each stream
   * has its own STREAMS_HTTP_LIVE_WAITERS_MAX; spread over many streams they would be unbounded,
   * and the isolate serves every project). One more is answered 503 with Retry-After.
   */
  STREAMS_HTTP_LIVE_REQUESTS_MAX: 10_000,
  /**
   * Of those, how many one caller (a principal) may hold: the isolate's slots are shared by every
   * project, and without this one caller spreading long-polls over its own streams could take
   * them all, so every other project's live reads were refused. One more is 503 with Retry-After.
   */
  STREAMS_HTTP_LIVE_REQUESTS_PER_CALLER_MAX: 1_000,
  /**
   * Longest one SSE response (`live=sse`) stays open; the client reconnects from its last offset,
   * as after any drop. Every write to the response waits at most until then: a client that stops
   * reading is cut off here, so it cannot hold its live slot and the page waiting for it forever.
   */
  STREAMS_HTTP_SSE_MAX_MS: 60_000,
  /** Idempotent producers remembered per stream; past it the least recently active is forgotten (its next write must start again at seq 0). */
  STREAMS_HTTP_PRODUCERS_MAX: 1_000,
  /**
   * Credentials and project records one Worker isolate remembers for /streams, each for
   * STREAMS_HTTP_AUTH_CACHE_MS: every request authenticates, and this bounds what the cache may hold.
   */
  STREAMS_HTTP_AUTH_CACHE_ENTRIES: 1_000,
  /** Events a fork copies from its source: a fork is made in one Durable Object turn. */
  STREAMS_HTTP_FORK_MAX_EVENTS: 50_000,
  /**
   * Stored payload bytes a fork copies from its source: the copy travels whole from the source to
   * the Worker and on to the fork, and one value over RPC is at most 32 MiB (twice this as UTF-16).
   */
  STREAMS_HTTP_FORK_MAX_BYTES: 8_388_608,

  // ---- MCP and OpenAPI ----
  /** Longest URL a remote client may be pointed at. */
  REMOTE_URL_MAX_LENGTH: 2048,
  /** Most headers a remote client sends with every request. */
  REMOTE_HEADERS_MAX: 64,
  /**
   * Bytes of one request body on a project's MCP route (`/mcp/<project>`): the body is read whole
   * before it is parsed. Larger arguments go over /api.
   */
  MCP_REQUEST_BODY_MAX_BYTES: 1_048_576,
  /** Nesting depth of a JSON body on the MCP route: bounds the parser's and every walker's recursion. */
  MCP_JSON_MAX_DEPTH: 64,
  /** JSON-RPC messages in one batch on the MCP route: each one is a call the OS serves. */
  MCP_BATCH_MAX_MESSAGES: 32,
  /**
   * Bytes of any one answer from a remote MCP or OpenAPI server (`itx.mcp.connect`,
   * `itx.openapi.connect`), the spec included: it is read into the Worker's memory before parsing.
   */
  REMOTE_RESPONSE_MAX_BYTES: 4_194_304,
  /** Tools a remote MCP server may list: each is kept, with its schema, while the client lives. */
  MCP_REMOTE_TOOLS_MAX: 1000,
  /** `tools/list` pages followed: a server that pages forever is cut off here. */
  MCP_REMOTE_LIST_PAGES_MAX: 20,
  /** Milliseconds one remote MCP request may take before it answers TIMEOUT. */
  MCP_REMOTE_REQUEST_TIMEOUT_MS: 60_000,
  /**
   * Nodes (objects, arrays, values) one remote spec or tool list may have once its references and
   * YAML aliases are expanded: a small document with shared references can stand for an
   * exponential tree, and `__describe()` serializes trees. Also bounds the ref parser's work, which
   * walks the expanded tree (about 30 µs a node on a loaded machine).
   */
  REMOTE_SCHEMA_NODES_MAX: 100_000,
  /**
   * Characters of an OpenAPI document written as YAML (JSON ones may be REMOTE_RESPONSE_MAX_BYTES).
   * js-yaml parses in JavaScript and cannot stop partway: on a 2-core machine 1 MiB of a flow list
   * (`x: [1,1,…]`) took it 560-720 ms, merge keys 340-660 ms, aliases 250-380 ms, each holding the
   * Worker's thread, where the native JSON parser takes a fraction of that. A quarter of a MiB
   * bounds the stall to a quarter of those; larger specs can be served as JSON.
   */
  OPENAPI_YAML_MAX_CHARS: 262_144,
  /** Nesting depth of a remote JSON or YAML document: bounds the parser's and every walker's recursion. */
  REMOTE_JSON_MAX_DEPTH: 128,
  /** Operations one OpenAPI spec may declare. */
  OPENAPI_OPERATIONS_MAX: 2000,
} as const;
