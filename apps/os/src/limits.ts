/**
 * Every limit the OS puts on untrusted input, in one place. Each says what it protects; each has
 * a test that crosses it and expects a coded error.
 */
export const LIMITS = {
  /** Longest secret or token accepted in credentials: bounds hashing and comparison work. */
  CREDENTIAL_STRING_MAX_LENGTH: 4096,
  /** Longest principal id an impersonation may name: ids are stamped onto every event. */
  PRINCIPAL_ID_MAX_LENGTH: 256,
  /** Most project ids one impersonated principal may carry: the set is checked on every access. */
  IMPERSONATED_PROJECT_IDS_MAX: 1000,
  /**
   * UTF-16 code units in one Cap'n Web message (a WebSocket frame or an HTTP batch line), before
   * or after authentication: bounds what parsing one message can take. Fits the largest input a
   * call accepts (an append of APPEND_MAX_BYTES, a worker of WORKER_SOURCE_MAX_BYTES) escaped.
   */
  API_MESSAGE_MAX_CHARS: 8_388_608,
  /**
   * Messages a WebSocket session may send before `authenticate()` has succeeded: every push is
   * held (an export, a pending call) by a peer the OS does not know yet. Pipelined calls behind
   * authenticate count, so it leaves room for a client that pipelines; a peer that never
   * authenticates is cut off here.
   */
  API_UNAUTHENTICATED_MESSAGES_MAX: 1000,
  /** UTF-16 code units a WebSocket session may send in total before `authenticate()` has succeeded. */
  API_UNAUTHENTICATED_CHARS_MAX: 4_194_304,
  /**
   * Calls (Cap'n Web pushes and pipes) one session may hold unreleased at once, after it has
   * authenticated: the OS keeps each one's result until the client releases it, which a client
   * does as soon as it has read the result. A peer that pushes and never releases is cut off here
   * (the unauthenticated budget above bounds it before authentication).
   */
  API_SESSION_OUTSTANDING_CALLS_MAX: 10_000,
  /**
   * Bytes of one HTTP batch body. A batch is read whole before anything in it authenticates, so
   * it is held to the unauthenticated budget; its lines count against API_UNAUTHENTICATED_MESSAGES_MAX.
   */
  API_HTTP_BATCH_MAX_BYTES: 4_194_304,
  /**
   * Contexts one connection may provide live capabilities to: each is remembered (and told when
   * the connection ends), so one client cannot grow the Worker's memory without bound.
   */
  CONNECTION_LIVE_CONTEXTS_MAX: 1000,
  /** Bytes of one file in a repository: a blob is read whole into memory whenever it is served. */
  REPO_FILE_MAX_BYTES: 4_194_304,
  /** Files one commit (API or pushed) may change: bounds the trees rewritten and the event's changedPaths. */
  REPO_COMMIT_FILES_MAX: 5000,
  /** Bytes a repository may store (objects, packs, indexes): one Durable Object's SQLite is finite. */
  REPO_SIZE_MAX_BYTES: 268_435_456,
  /** Characters in a file path inside a repository: paths are stored in trees and events. */
  REPO_FILE_PATH_MAX_LENGTH: 1024,
  /** Characters in a branch name: names are refs, event fields and URL parts. */
  REPO_BRANCH_NAME_MAX_LENGTH: 200,
  /** Branches one repository may have: every clone is sent the whole list. */
  REPO_BRANCHES_MAX: 1000,
  /** Commits one push may add to a branch: each becomes a repo/commit-completed fact. */
  REPO_PUSH_COMMITS_MAX: 1000,
  /** Commits `log` answers at most. */
  REPO_LOG_LIMIT_MAX: 1000,
  /** Bytes `snapshot` answers at most (a dynamic worker's sources, or a file map). */
  REPO_SNAPSHOT_MAX_BYTES: 16_777_216,
  /**
   * Bytes of one git smart-HTTP request body (a push's pack and commands, or a fetch's
   * negotiation), read only after the credentials are checked. The pack is held in memory while
   * it is indexed.
   */
  GIT_HTTP_BODY_MAX_BYTES: 67_108_864,
  /** Bytes of a fetch's negotiation (wants and haves): far more than any real clone sends. */
  GIT_HTTP_NEGOTIATION_MAX_BYTES: 1_048_576,
  /** Ref updates one push may carry. */
  GIT_HTTP_REF_UPDATES_MAX: 100,
  /** Bytes of a browser sign-in body ({ credentials }): read whole before anything authenticates. */
  SIGN_IN_BODY_MAX_BYTES: 16_384,
  /** Characters of a Cookie header the OS reads: bounds parsing before anything authenticates. */
  COOKIE_HEADER_MAX_LENGTH: 8_192,
  /** Characters of a session cookie's value: longer ones are never ours and are not verified. */
  SESSION_COOKIE_MAX_LENGTH: 256,
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
  /** Idempotent producers remembered per stream; past it the least recently active is forgotten (its next write must start again at seq 0). */
  STREAMS_HTTP_PRODUCERS_MAX: 1_000,
  /**
   * Credentials and project records one Worker isolate remembers for /streams, each for
   * STREAMS_HTTP_AUTH_CACHE_MS: every request authenticates, and this bounds what the cache may hold.
   */
  STREAMS_HTTP_AUTH_CACHE_ENTRIES: 1_000,
  /** Events a fork copies from its source: a fork is made in one Durable Object turn. */
  STREAMS_HTTP_FORK_MAX_EVENTS: 50_000,
} as const;

/** The name of one OS limit, as it appears in an error's `details.limit`. */
export type OsLimit = keyof typeof LIMITS;
