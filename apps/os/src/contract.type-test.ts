/**
 * Compile-time tests: the platform's RpcTargets implement the public contract in `iterate/types`
 * (checked by `pnpm typecheck`; nothing here runs). A member that drifts from types.ts, a missing
 * built-in, or a literal kind widened to `string` fails the build here.
 */
import type {
  Agent,
  AgentChat,
  Agents,
  CapabilityHost,
  Egress,
  Itx,
  Mcp,
  McpClient,
  OpenApi,
  OpenApiClient,
  Repo,
  Repos,
  Processors,
  Scheduler,
  Secret,
  Secrets,
  Session,
  Stream,
  Tokens,
  UnauthenticatedRoot,
} from "iterate/types";
import type { AgentChatRpcTarget } from "./agent/agent-chat-rpc-target.ts";
import type { AgentRpcTarget, AgentsRpcTarget } from "./agent/agent-rpc-target.ts";
import type { UnauthenticatedRootRpcTarget } from "./api/unauthenticated-root.ts";
import type { SessionRpcTarget } from "./api/session.ts";
import type { TokensRpcTarget } from "./auth/tokens-rpc-target.ts";
import type { EgressRpcTarget } from "./egress/egress-rpc-target.ts";
import type { CapabilityHostRpcTarget } from "./itx/capability-host-rpc-target.ts";
import type { BUILT_INS, BuiltInMembers, BuiltInRow } from "./itx/built-ins.ts";
import type { ItxRpcTarget } from "./itx/itx-rpc-target.ts";
import type { SchedulerRpcTarget } from "./scheduler/scheduler-rpc-target.ts";
import type { ProcessorRpcTarget } from "./processor/processor-rpc-target.ts";
import type { RepoRpcTarget, ReposRpcTarget } from "./repo/repos-rpc-target.ts";
import type { McpClientRpcTarget } from "./mcp/mcp-client-rpc-target.ts";
import type { McpRpcTarget } from "./mcp/mcp-rpc-target.ts";
import type { OpenApiClientRpcTarget } from "./openapi/openapi-client-rpc-target.ts";
import type { OpenApiRpcTarget } from "./openapi/openapi-rpc-target.ts";
import type { SecretRpcTarget, SecretsRpcTarget } from "./secret/secrets-rpc-target.ts";
import type { StreamRpcTarget } from "./stream/stream-rpc-target.ts";

type Primitive = string | number | boolean | bigint | symbol | null | undefined;

/** What serving `T` over RPC takes: every method may answer a promise, every result served in turn. */
export type Served<T> = unknown extends T
  ? unknown
  : T extends Primitive | Request | Response | Uint8Array
    ? T
    : T extends ReadonlyArray<infer Item>
      ? ReadonlyArray<Served<Item>>
      : { [K in keyof T as K extends symbol ? never : K]: ServedMember<T[K]> };

// A property may be served as a promise: it is pipelined like a call's result.
type ServedMember<M> = M extends (...args: infer A) => infer R ? (...args: A) => Served<R> | Promise<Served<R>> : Served<M> | Promise<Served<M>>;

type Expect<T extends true> = T;
type Implements<Target, Contract> = [Target] extends [Served<Contract>] ? true : false;

export type PlatformImplementsContract = [
  Expect<Implements<UnauthenticatedRootRpcTarget, UnauthenticatedRoot>>,
  Expect<Implements<SessionRpcTarget, Session>>,
  Expect<Implements<TokensRpcTarget, Tokens>>,
  Expect<Implements<ItxRpcTarget, Itx>>,
  Expect<Implements<CapabilityHostRpcTarget, CapabilityHost>>,
  Expect<Implements<StreamRpcTarget, Stream>>,
  Expect<Implements<AgentsRpcTarget, Agents>>,
  Expect<Implements<AgentRpcTarget, Agent>>,
  Expect<Implements<AgentChatRpcTarget, AgentChat>>,
  Expect<Implements<SecretsRpcTarget, Secrets>>,
  Expect<Implements<SecretRpcTarget, Secret>>,
  Expect<Implements<EgressRpcTarget, Egress>>,
  Expect<Implements<SchedulerRpcTarget, Scheduler>>,
  Expect<Implements<ProcessorRpcTarget, Processors>>,
  Expect<Implements<ReposRpcTarget, Repos>>,
  Expect<Implements<RepoRpcTarget, Repo>>,
  Expect<Implements<McpRpcTarget, Mcp>>,
  Expect<Implements<McpClientRpcTarget, McpClient>>,
  Expect<Implements<OpenApiRpcTarget, OpenApi>>,
  Expect<Implements<OpenApiClientRpcTarget, OpenApiClient>>,
];

/** The built-ins table (itx/built-ins.ts) has a well-formed row for every member of `Itx`. */
export type BuiltInTableCoversContract = [
  Expect<[typeof BUILT_INS] extends [Readonly<Record<string, BuiltInRow>>] ? true : false>,
  Expect<[Exclude<keyof Itx, "__describe">] extends [keyof BuiltInMembers] ? true : false>,
];
