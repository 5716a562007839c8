import { runConformanceTests } from "@durable-streams/server-conformance-tests";
import { withStreamCredentials } from "./stream-credentials.ts";

// The official Durable Streams conformance suite against /streams/<project> of the local OS.
// Cases it skips or that fail are listed with reasons in docs/protocols.md.
// longPollTimeoutMs is the harness's STREAMS_LIVE_WAIT_MS (harness/global-setup.ts).
const options = { baseUrl: "http://127.0.0.1:1/unset", longPollTimeoutMs: 2_000 };
withStreamCredentials(options);
runConformanceTests(options);
