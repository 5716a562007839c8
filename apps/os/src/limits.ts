import { STREAM_LIMITS } from "iterate/stream/events";
import { UNTRUSTED_LIMITS } from "./worker-loader/untrusted-limits.ts";
import { PROTOCOL_LIMITS } from "./limits/protocol-limits.ts";

/**
 * Every limit the OS puts on untrusted input, in one place (the one registry: no module keeps a
 * limit of its own; `LIMITS` below adds the stream's and untrusted code's groups). Each says what it protects; each limit on input has a test that crosses it
 * and expects a coded error whose `details.limit` is its name (`LimitName`). Also here: the
 * bounds the platform keeps on its own memory (caches, hints), so a reader finds every number.
 */
const PLATFORM_LIMITS = {
  // ---- The API and authentication ----
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
   * Characters of answers one session holds unreleased: every answer sent for a call the client
   * has not released yet (capnweb keeps the result until then), and for an HTTP batch the whole
   * response. The OS pulls every call's answer as soon as it is ready, so a client that pushes
   * large reads and never pulls or releases them is cut off here (RESOURCE_EXHAUSTED) rather than
   * held only to the count above. Fits a few of the largest answers (a REPO_SNAPSHOT_MAX_BYTES
   * snapshot) in flight at once.
   */
  API_SESSION_HELD_RESULTS_MAX_CHARS: 67_108_864,
  /**
   * Bytes of one HTTP batch body. A batch is read whole before anything in it authenticates, so
   * it is held to the unauthenticated budget; its lines count against API_UNAUTHENTICATED_MESSAGES_MAX.
   */
  API_HTTP_BATCH_MAX_BYTES: 4_194_304,
  /**
   * How long a body read before anything authenticates (an /api batch, a browser sign-in) may take
   * to arrive: a client trickling bytes gets TIMEOUT rather than holding what it sent so far.
   */
  API_BODY_READ_TIMEOUT_MS: 30_000,
  /**
   * How long a WebSocket on /api may stay open without a successful `authenticate()`: past it the
   * socket is closed (4008), so idle unauthenticated sockets and their budgets do not pile up.
   */
  API_AUTHENTICATE_WITHIN_MS: 60_000,
  /**
   * Contexts one connection may provide live capabilities to: each is remembered (and told when
   * the connection ends), so one client cannot grow the Worker's memory without bound.
   */
  CONNECTION_LIVE_CONTEXTS_MAX: 1000,

  // ---- Authentication and sessions ----
  /** Longest lifetime of an issued token. */
  TOKEN_TTL_MAX_SECONDS: 30 * 24 * 3600,
  /** Bytes of a browser sign-in body ({ credentials }): read whole before anything authenticates. */
  SIGN_IN_BODY_MAX_BYTES: 16_384,
  /** Characters of a Cookie header the OS reads: bounds parsing before anything authenticates. */
  COOKIE_HEADER_MAX_LENGTH: 8_192,
  /** Characters of a session cookie's value: longer ones are never ours and are not verified. */
  SESSION_COOKIE_MAX_LENGTH: 256,

  // ---- Projects ----
  PROJECT_SLUG_MAX_LENGTH: 63,
  /**
   * Characters (and UTF-8 bytes) of a built project worker kept in one row of the project's own
   * storage (a SQLite row holds at most 2 MB); a larger one is kept in parts, and in memory.
   */
  PROJECT_ARTIFACT_MAX_CHARS: 1_900_000,
  /**
   * Characters of those larger project workers kept in memory in one isolate, every project's
   * together (each project keeps its newest). Past it the least recently used is let go, and that
   * project reads its worker from its parts again on its next request. Locally every project
   * shares one process.
   */
  PROJECT_ARTIFACTS_IN_MEMORY_MAX_CHARS: 50_331_648,
  /**
   * Readiness probes of one build a runner death may stop before the build counts as failed. The
   * runner is shared: another project's code can kill it under a probe, so one death is not the
   * worker's fault; a worker whose own probe kills the runner every time fails after this many.
   */
  PROJECT_PROBE_RUNNER_DEATHS_MAX: 3,

  // ---- Config-repo stream processors (itx.processor) ----
  /**
   * Config-repo processors one stream may feed: each is a delivery the stream pumps after every
   * append and a facet in the runner, so a context cannot make its stream's appends fan out without bound.
   */
  USER_PROCESSORS_PER_STREAM_MAX: 16,
  /**
   * Deliveries of the same batch a config-repo processor may fail (it threw, or ran past
   * CALL_TIMEOUT_MS) before its subscription halts with itx/subscription-delivery-halted: a poison
   * event costs this many runs, not one every minute forever. A new commit of its code resumes it.
   */
  USER_PROCESSOR_FAILURES_MAX: 5,
  /** Characters of a config-repo processor's snapshot the OS relays: its state is the user's code's, the OS's memory is not. */
  USER_PROCESSOR_SNAPSHOT_MAX_CHARS: 1_048_576,

  // ---- Streams (the platform's own; the event rules are STREAM_LIMITS above) ----
  /** Longest stream path: paths are stamped onto every event and used as Durable Object names. */
  STREAM_PATH_MAX_LENGTH: 512,
  /** Most hosted-processor subscriptions on one stream: each is woken on every append. */
  SUBSCRIPTIONS_MAX: 32,
  /**
   * How many type and source ids a stream's journal keeps in memory each. Sources carry a reaction
   * chain's start, so writers can make many: past this the cache starts again (a miss costs one
   * statement), and memory stays bounded whatever they do.
   */
  JOURNAL_NAMES_CACHED_MAX: 1024,
  /**
   * The newest rows a stream's journal keeps in memory as JSON text, for whoever reads right behind
   * the head (processor deliveries and live subscribers after each append): at most this many rows,
   * and at most JOURNAL_RECENT_MAX_CHARS characters of payload JSON (1 or 2 bytes of memory each).
   */
  JOURNAL_RECENT_MAX_EVENTS: 1_000,
  JOURNAL_RECENT_MAX_CHARS: 1_048_576,
  /** Most live subscribers on one stream: each costs a retained callback and a send per append. */
  LIVE_SUBSCRIBERS_MAX: 256,
  /**
   * Ephemeral events one live subscriber may have waiting behind its callback call in flight, and
   * their UTF-8 bytes as JSON: they live only in the stream's memory (durable ones are read again
   * from the journal). A subscriber past either is closed, as one whose callback threw.
   */
  LIVE_SUBSCRIBER_EPHEMERAL_MAX_EVENTS: 1_000,
  LIVE_SUBSCRIBER_EPHEMERAL_MAX_BYTES: 1_048_576,
  /**
   * Bytes of ephemeral events waiting behind the live subscribers of every stream one isolate holds
   * (each subscriber's queue counted). Past it, the subscribers holding the most are closed first.
   */
  LIVE_EPHEMERAL_QUEUED_MAX_BYTES: 67_108_864,
  /** How long one call of a live subscriber's callback may take: past it the subscriber is closed, and what it held let go. */
  LIVE_SUBSCRIBER_CALLBACK_TIMEOUT_MS: 30_000,
  /** Most callers parked in `waitForEvent` on one stream: each is matched against every event committed. */
  STREAM_WAITERS_MAX: 256,
  /**
   * Stored events one `waitForEvent` looks through before it waits (those after its `afterOffset`).
   * A wait further back is refused: read the history with `getEvents`, then wait from its end.
   */
  WAIT_SCAN_MAX_EVENTS: 100_000,
  /** Stored events one statement of that look-through reads before the thread is given up a turn. */
  WAIT_SCAN_WINDOW_EVENTS: 10_000,
  /** Most events one `getEventsPacked` page may hold: bounds the string built in memory (~2 MB at typical sizes). */
  READ_JSON_MAX_LIMIT: 10_000,
  /**
   * Stored payload bytes in one `getEvents` or `getEventsPacked` page, past its first event (a page
   * always has one; readers go on from the last offset they got): without it a page of
   * READ_JSON_MAX_LIMIT events of EVENT_MAX_BYTES is a 2.5 GB string in the stream's object.
   */
  READ_PAGE_MAX_BYTES: 4_194_304,
  /** Longest a held append (`holdDelivery`) waits for the next append before its processors get it anyway. */
  DELIVERY_HOLD_MS: 1_000,
  /**
   * How soon after a commit its stream's alarm stands, should the OS stop before the commit
   * reached its processors (cut off mid-delivery, or held): the alarm brings the stream back up,
   * and a new incarnation delivers to every processor from its checkpoint. Armed once per stretch
   * of appends, not per append (see ProcessorDeliveries).
   */
  DELIVERY_BACKSTOP_MS: 10_000,
  /**
   * How long a stream keeps an idle session with a processor host before offering to end it, so
   * that idle contexts can leave memory (see ProcessorDeliveries.releaseIdle).
   */
  DELIVERY_SESSION_IDLE_MS: 30_000,
  /**
   * Longest a stream waits for a processor host to answer an offer to end its idle session. Past
   * it the stream drops the session as if the host were gone (the next event wakes the host from
   * its checkpoint), so a host that never answers cannot stall that subscription's deliveries,
   * which wait for a release under way.
   */
  DELIVERY_RELEASE_WAIT_MS: 5_000,
  /**
   * Most rounds a chain of reactions may run: code reacting to code reacting to ... A write stamped
   * with a later round is refused with LOOP_LIMIT, so two agents answering each other (or a handler
   * appending what it handles) stop on their own.
   */
  REACTION_ROUNDS_MAX: 5,
  /**
   * How long a project root's undelivered `stream/woken` stands for later incarnations: a stream
   * that keeps restarting before the worker has taken its woken records no new one until then, so
   * a crash loop wakes the worker at most once per this interval (stream/stream-woken.ts).
   */
  STREAM_WOKEN_COALESCE_MS: 300_000,

  // ---- Contexts and capabilities ----
  /** Longest capability path: paths are keys of the table and travel with every call. */
  CAPABILITY_PATH_MAX_SEGMENTS: 32,
  /** Longest path segment. */
  CAPABILITY_SEGMENT_MAX_LENGTH: 128,
  /** How many hosts one call may pass through (delegation, expressions calling capabilities). */
  CALL_DEPTH_MAX: 32,
  /** Longest `instructions` on a mount: describe() returns them for every mount in the chain. */
  INSTRUCTIONS_MAX_LENGTH: 4_000,
  /** Longest `types` on a mount. */
  TYPES_MAX_LENGTH: 16_000,
  /** Most steps in an expression recipe. */
  EXPRESSION_STEPS_MAX: 8,
  /** Most mounts one context may hold (their bytes are bounded too: MOUNTS_MAX_BYTES). */
  MOUNTS_MAX: 2_000,
  /**
   * Bytes (UTF-8 JSON, each row as the fold keeps it) one context's mounts may take: the table is part of the capability host's checkpoint, which is at most 1 MiB, beside the
   * enqueued runs waiting (RUNS_OPEN_MAX_BYTES). A handful of the largest source capabilities fill it.
   */
  MOUNTS_MAX_BYTES: 557_056,
  /** Hints one context keeps (the least recently made go first). */
  RESOLUTION_HINTS_MAX: 512,
  /** A hint older than this is asked again: the safety net should a watcher not be reached. */
  RESOLUTION_HINT_TTL_MS: 60_000,
  /** Watchers one context keeps; past it, askers are answered but not watched (and so keep no hint). */
  RESOLUTION_WATCHERS_MAX: 1_024,
  /** Bytes of source one capability may carry: it is stored in its capability-provided event. */
  SOURCE_MAX_BYTES: 131_072,
  /** Modules one source capability may have. */
  SOURCE_MODULES_MAX: 32,

  // ---- Secrets and egress ----
  /** Most characters of secret material: it travels in request headers and bodies. */
  SECRET_MATERIAL_MAX_LENGTH: 16_384,
  /** Most URLs in one secret's egress allowlist. */
  SECRET_EGRESS_URLS_MAX: 32,
  /** Largest request body egress carries at all: it is held in memory while the chain is asked. */
  EGRESS_BODY_MAX_BYTES: 10_485_760,
  /**
   * How long egress waits for a request body to arrive whole. The body comes from the code that
   * sends it (a stream it writes as slowly as it likes), and is read before the chain is asked.
   */
  EGRESS_BODY_READ_TIMEOUT_MS: 30_000,
  /** Distinct materials one run may use. Past it the run's result is withheld (it is fail-closed, not forgotten). */
  RUN_MATERIALS_MAX: 64,
  /**
   * How long a scope (project and origin context) is remembered to have used a material: what
   * its loaded code answers in that time is scrubbed of it, so material kept in a global by one
   * call and returned by a later one is caught (egress/materials-in-use.ts).
   */
  RECENT_MATERIALS_MS: 900_000,
  /** Distinct materials one scope's recent record holds. Past it the scope's results are withheld until the window has passed. */
  RECENT_MATERIALS_MAX: 64,
  /** Characters of material (and scope keys) the recent records of one isolate hold; past it the least recently used scope is forgotten. */
  RECENT_MATERIALS_MAX_CHARS: 4_194_304,
  /**
   * Bytes of scrub patterns kept for the sets of materials used last (worker-loader/scrubbed-call.ts):
   * each material has dozens of spellings, several times its length, and 64 of the longest make tens of MB.
   */
  SCRUB_PATTERNS_CACHE_MAX_BYTES: 8_388_608,

  // ---- Dynamic workers ----
  /** Most files in one dynamic worker's source. */
  WORKER_FILES_MAX: 64,
  /** Most bytes of source in one dynamic worker. */
  WORKER_SOURCE_MAX_BYTES: 1_048_576,
  /** Builds one OS isolate keeps: each holds a bundle in memory, and any caller can ask for a new one. */
  WORKER_BUILDS_MAX: 64,
  /** Characters of bundled modules the kept builds may hold together (about 64 MB as UTF-16). */
  WORKER_BUILDS_MAX_CHARS: 32_000_000,
  /**
   * Characters of one bundle the bundler Worker answers: a small source can import its way to a
   * large bundle, and the OS holds the answer in memory and caches it (WORKER_BUILDS_MAX_CHARS).
   */
  BUNDLE_OUTPUT_MAX_CHARS: 8_000_000,
  /**
   * How long the OS waits for the bundler Worker to answer one build: bounds what untrusted source
   * can hold a creation step or a `workers.get` for (the first build of a bundler isolate, which
   * compiles esbuild's wasm, takes seconds, over a minute on a loaded local machine; a warm one
   * tens of milliseconds).
   */
  BUNDLE_WAIT_MS: 120_000,
  /**
   * npm packages one build may install from a `package.json`. The bundler installs them from the
   * npm registry (and nowhere else), in the one workerd process it shares with the OS locally.
   */
  BUNDLE_NPM_PACKAGES_MAX: 200,
  /** Bytes one build may download from the npm registry, metadata and tarballs together. */
  BUNDLE_NPM_DOWNLOAD_MAX_BYTES: 33_554_432,
  /** Bytes one build's tarballs may unpack to: a small gzip can inflate a thousandfold. */
  BUNDLE_NPM_UNPACKED_MAX_BYTES: 67_108_864,
  /** Longest durable worker key: it names a facet of the context's object. */
  DURABLE_WORKER_KEY_MAX_LENGTH: 128,
  /**
   * Characters of prepared scripts (source plus module) one Worker isolate keeps: bounds the memory
   * that untrusted sources can take in the cache below (about 8 MB).
   */
  PREPARED_SCRIPTS_MAX_CHARS: 4_000_000,
  /**
   * Most loop iterations one run may make, across all its loops. workerd runs every isolate of a
   * process on one thread and the local runtime does not enforce the Loader's CPU limit, so a
   * script's endless loop would stop the whole OS: every loop body counts against this instead.
   */
  LOOP_ITERATIONS_MAX: 50_000_000,

  // ---- Repositories and git smart HTTP ----
  /** Bytes of one file in a repository: a blob is read whole into memory whenever it is served. */
  REPO_FILE_MAX_BYTES: 4_194_304,
  /** Files one commit (API or pushed) may change: bounds the trees rewritten and the event's changedPaths. */
  REPO_COMMIT_FILES_MAX: 5000,
  /** Bytes a repository may store (objects, packs, indexes): one Durable Object's SQLite is finite. */
  REPO_SIZE_MAX_BYTES: 268_435_456,
  /**
   * Objects a repository's pushed packs may hold together. Each pack's index is kept in memory
   * while the repository is read (about 40 bytes an object), and 256 MiB of tiny objects would be
   * millions of them: this keeps the indexes near 20 MB.
   */
  REPO_PACKED_OBJECTS_MAX: 500_000,
  /**
   * A pushed pack smaller than this (and inflating to at most eight times its own size: whole
   * objects, not deltas on large files) is kept as loose objects, one row each, instead of as a
   * pack: a pack's index stays in memory while the repository is read, so a long life of small
   * pushes would otherwise fill the isolate with them.
   */
  REPO_PACK_MIN_BYTES: 1_048_576,
  /** Packs a repository keeps (each index in memory, about a kilobyte each beside its objects); past it pushes are kept as loose objects. */
  REPO_PACKS_MAX: 4096,
  /** Characters in a file path inside a repository: paths are stored in trees and events. */
  REPO_FILE_PATH_MAX_LENGTH: 1024,
  /** Characters in a branch name: names are refs, event fields and URL parts. */
  REPO_BRANCH_NAME_MAX_LENGTH: 200,
  /** Branches one repository may have: every clone is sent the whole list. */
  REPO_BRANCHES_MAX: 1000,
  /** Commits one push may add to a branch: each becomes a repo/commit-completed fact. */
  REPO_PUSH_COMMITS_MAX: 1000,
  /** Characters in a commit message: it is stored in the commit and its event. */
  REPO_COMMIT_MESSAGE_MAX_LENGTH: 65_536,
  /** Globs one include or exclude list may hold: each path read is matched against every one. */
  REPO_GLOB_MASKS_MAX: 100,
  /** Characters in one glob: each becomes a regular expression. */
  REPO_GLOB_MASK_MAX_LENGTH: 256,
  /** Commits `log` answers at most. */
  REPO_LOG_LIMIT_MAX: 1000,
  /** Bytes `snapshot` answers at most (a dynamic worker's sources, or a file map). */
  REPO_SNAPSHOT_MAX_BYTES: 16_777_216,
  /**
   * Bytes of one git smart-HTTP request body (a push's pack and commands), read only after the
   * credentials are checked. The pack is held in memory while it is indexed, and crosses to the
   * repository's Durable Object as one RPC value, which workerd stops at 32 MiB: 31 MiB leaves
   * room for the rest of the call. A larger push is several pushes.
   */
  GIT_HTTP_BODY_MAX_BYTES: 32_505_856,
  /**
   * Bytes of a push past GIT_HTTP_BODY_MAX_BYTES read and dropped (counted from the body's start)
   * before the refusal is answered. git reads no answer before it has sent its whole body, so an
   * answer sent earlier reaches it as a broken pipe; one sent after reaches it as a report it
   * prints. A repository's own bound: a larger push could never be stored anyway.
   */
  GIT_HTTP_REFUSED_BODY_DRAIN_MAX_BYTES: 268_435_456,
  /**
   * Characters of a ref a push names. Only branches are accepted (their names are at most
   * REPO_BRANCH_NAME_MAX_LENGTH), but every named ref is echoed in the push's report.
   */
  GIT_REF_NAME_MAX_LENGTH: 1_024,
  /**
   * Bytes of push bodies one Worker isolate holds at once. A push's body is held whole while it
   * crosses to its repository (and copied on the way): two at the largest size would take most of
   * an isolate's 128 MB, which every project's requests share. Past it, a push is UNAVAILABLE (503)
   * until the others are answered.
   */
  GIT_HTTP_PUSH_BYTES_IN_FLIGHT_MAX: 41_943_040,
  /**
   * Milliseconds a push's bytes count toward GIT_HTTP_PUSH_BYTES_IN_FLIGHT_MAX at most: a request
   * whose client went away may never reach the code that gives them back.
   */
  GIT_HTTP_PUSH_LEASE_MAX_MS: 300_000,
  /**
   * Bytes a pushed pack's objects may inflate to, deltas counted as the objects they rebuild.
   * Indexing inflates every object in JavaScript on the repository's thread (locally the OS's one
   * thread): a small pack of deflated zeros stands for a thousand times its size, so the body's
   * own bound does not bound this. A larger push is several pushes.
   */
  GIT_PUSH_INFLATED_MAX_BYTES: 134_217_728,
  /**
   * Compressed bytes of whole objects one push may keep as loose rows, held in memory until the
   * push is kept: objects whose delta chains, counted through earlier pushes, are longer than 50
   * (so that no read walks a longer one), and a pack kept as loose rows (REPO_PACK_MIN_BYTES,
   * REPO_PACKS_MAX).
   */
  GIT_PUSH_KEPT_WHOLE_MAX_BYTES: 33_554_432,
  /**
   * Objects one pushed pack may hold, read from its header before anything is inflated. Each is
   * two inflations, a hash and a row of the index, however small it is: 31 MiB of 10-byte
   * objects is over 3 million of them, and 20,000 take about 4 s to index here (giving the thread
   * up as they go). A larger push is several pushes.
   */
  GIT_PUSH_OBJECTS_MAX: 20_000,
  /** Distinct objects one fetch may want (each is read): clients want ref tips, at most one per branch. */
  GIT_FETCH_WANTS_MAX: 1000,
  /**
   * Distinct `ref-prefix` arguments of one `ls-refs` (each ref is checked against each, on the
   * Worker's thread): git sends a few (HEAD, refs/heads/, refs/tags/, one per refspec).
   */
  GIT_LS_REFS_PREFIXES_MAX: 256,
  /**
   * Distinct haves of one fetch that are looked up (each is an object read on the repository's
   * thread); the rest are ignored, which only makes the pack larger. git gives up after 256 haves
   * the server does not know.
   */
  GIT_FETCH_HAVES_MAX: 1024,
  /** Bytes of a fetch's negotiation (wants and haves): far more than any real clone sends. */
  GIT_HTTP_NEGOTIATION_MAX_BYTES: 1_048_576,
  /** Ref updates one push may carry. */
  GIT_HTTP_REF_UPDATES_MAX: 100,

  // ---- The scheduler (names without a prefix: errors have always said them so) ----
  /** Schedules one context may hold: each is a row of the fold's checkpoint and a firing to drive. */
  SCHEDULES_PER_CONTEXT_MAX: 100,
  /**
   * Scheduled occurrences one project runs a minute, across all its contexts' schedules (a burst of
   * a tenth of it at once): an occurrence past it settles failed with RESOURCE_EXHAUSTED without
   * running. Schedules keep running with no client connected, so the project's total is bounded
   * however many contexts hold schedules.
   */
  SCHEDULED_RUNS_PER_PROJECT_PER_MINUTE: 1_200,
  /**
   * The longest a context's scheduler waits after the project's budget refused one of its
   * occurrences: it fires nothing meanwhile (its slots coalesce), waiting 1 s after the first
   * refusal in a row and twice as long after each next one. Without it every refused slot of
   * every schedule still cost a fact and a call to the project, second after second.
   */
  SCHEDULER_REFUSED_PAUSE_MAX_MS: 60_000,
  /**
   * Bytes (UTF-8 JSON, as the fold keeps them) one context's schedules may take: they are its
   * scheduler's checkpoint, at most 1 MiB, and each holds its script.
   */
  SCHEDULES_MAX_BYTES: 524_288,
  /** Shortest `every`, in seconds: each occurrence runs a script in an isolate. */
  EVERY_MIN_SECONDS: 1,
  /** Longest `every`, in seconds (one year): keeps occurrence times far inside safe integers. */
  EVERY_MAX_SECONDS: 31_536_000,
  /** Longest schedule script: it is stored in the defining event and folded into every checkpoint. */
  SCRIPT_MAX_LENGTH: 16_000,
  /** Longest schedule key. */
  KEY_MAX_LENGTH: 128,
  /** Longest cron expression. */
  CRON_MAX_LENGTH: 128,
  /** Characters of a failed occurrence's error message kept in its `itx/schedule-failed` fact. */
  ERROR_MESSAGE_MAX_LENGTH: 2_000,
  /** Cron slots counted when missed ones coalesce; past it the count says "at least". */
  COALESCE_COUNT_MAX: 1_000,

  // ---- Logging ----
  /** The limiter's window, in milliseconds. */
  LOG_WINDOW_MS: 1_000,
  /** Distinct messages a summary names; the rest are counted together. */
  LOG_SUMMARY_KEYS_MAX: 16,

  // ---- Scripts (untrusted code run by itx.run) ----
  /** Characters of script source: it is stored in the run-requested event. */
  SOURCE_MAX_LENGTH: 64_000,
  /**
   * Enqueued runs (`itx/run-requested` with `enqueued`) one context holds unsettled: each waits,
   * script and all, in the capability host's checkpoint (at most 1 MiB). The append past it is
   * RESOURCE_EXHAUSTED; its writer appends again once some have settled.
   */
  RUNS_OPEN_MAX: 64,
  /**
   * UTF-8 bytes the enqueued runs one context holds unsettled may add up to, each counted as the
   * capability host keeps it (script, writer, reaction, as JSON). Above one event's most (256 KiB),
   * so a single run always fits.
   */
  RUNS_OPEN_MAX_BYTES: 393_216,
  /**
   * Of RUNS_OPEN_MAX and RUNS_OPEN_MAX_BYTES, what only the platform may fill (an agent enqueues
   * its own replies' scripts): other writers stop this far short, so they cannot refuse an agent's
   * run, which it would then ask its model for again.
   */
  RUNS_OPEN_PLATFORM_RESERVE: 4,
  RUNS_OPEN_PLATFORM_RESERVE_BYTES: 131_072,
  /** Wall-clock time one run may take before it ends with TIMEOUT. */
  TIMEOUT_MS: 30_000,
  /** Bytes of JSON a script may return: the result is stored in the run-settled event. */
  RESULT_MAX_BYTES: 131_072,
  /**
   * Characters of a failed run's message kept in its run-settled event and answered (the rest is
   * cut, with a note of how much): any message a script throws fits in the event that settles it.
   */
  FAILURE_MESSAGE_MAX_LENGTH: 16_000,

  // ---- Agents ----
  /** Longest message text (`message`, `ask`, `chat.sendMessage`): each lands in the model's context. */
  MESSAGE_MAX_LENGTH: 32_000,
  /** Longest per-agent system prompt. */
  SYSTEM_PROMPT_MAX_LENGTH: 16_000,
  /** Model turns in a row without a new message from outside: stops an agent that never returns undefined. */
  AUTONOMOUS_TURNS_MAX: 8,
  /** Corrective items in a row for replies without exactly one valid script block. */
  CORRECTIVES_MAX: 1,
  /** Items the history lane keeps; older ones are compacted away (the system lane never is). */
  HISTORY_ITEMS_MAX: 200,
  /**
   * Bytes (UTF-8 JSON) the history lane keeps, the newest item always: it is part of the agent
   * processor's checkpoint, which is at most 1 MiB, so a long conversation of long items compacts
   * instead of leaving a checkpoint that can never be written.
   */
  HISTORY_MAX_BYTES: 524_288,
  /** Characters of a script's result or error kept in the developer item the model reads. */
  SCRIPT_OUTCOME_MAX_LENGTH: 8_000,
  /** Characters a model reply may have; a longer stream is cut and the request fails. */
  REPLY_MAX_LENGTH: 64_000,
  /**
   * Bytes of one line of a model's event stream: a line is held until its newline arrives, so a
   * model that never sends one would grow it (and the search for it) without end. One chunk of a
   * reply, escaped as JSON, is far smaller.
   */
  LLM_STREAM_LINE_MAX_BYTES: 1_048_576,
  /** Bytes of a model's answer that is one JSON completion rather than a stream: it is read whole before it is parsed. */
  LLM_RESPONSE_MAX_BYTES: 1_048_576,
  /** How long the processor waits after the last input before asking the model (a burst is one turn). */
  DEBOUNCE_MS: 5,
  /** The longest a model request may take. */
  LLM_TIMEOUT_MS: 120_000,
  /** Default and largest `ask` wait. */
  ASK_TIMEOUT_MS: 120_000,
} as const;

export const LIMITS = {
  // The event rules every stream enforces, from the SDK (`iterate/stream/events`): the in-memory
  // stream of iterate/stream/test-support enforces the same numbers.
  ...STREAM_LIMITS,
  // Untrusted code (scripts, dynamic workers, source capabilities): kept in their own file, which
  // the local runner's watchdog reads too (worker-loader/untrusted-limits.ts imports nothing).
  ...UNTRUSTED_LIMITS,
  // The open protocols' routes (Durable Streams over HTTP, MCP, OpenAPI).
  ...PROTOCOL_LIMITS,
  ...PLATFORM_LIMITS,
} as const;

/** The name of one limit, as it appears in an error's `details.limit`. */
export type LimitName = keyof typeof LIMITS;

/** The `details` of an error that refuses input past a limit: its name, checked against the registry. */
export function limitDetails(limit: LimitName): { limit: LimitName } {
  return { limit };
}

// A name in two groups would silently take the later group's value: the groups are disjoint.
type Shared<A, B> = keyof A & keyof B;
type Groups = [typeof STREAM_LIMITS, typeof UNTRUSTED_LIMITS, typeof PROTOCOL_LIMITS, typeof PLATFORM_LIMITS];
type Overlaps<G extends unknown[]> = G extends [infer First, ...infer Rest] ? { [K in keyof Rest]: Shared<First, Rest[K]> }[number] | Overlaps<Rest> : never;
const _disjoint: [Overlaps<Groups>] extends [never] ? true : never = true;
