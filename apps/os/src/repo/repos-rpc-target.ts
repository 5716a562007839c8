import { RpcTarget } from "cloudflare:workers";
import { ItxError } from "iterate/errors";
import { relay } from "../api/relay.ts";
import { unwrapCoded, type Coded } from "../api/coded-result.ts";
import type { Caller } from "../capability-host/capability-host-api.ts";
import { ensureRootChild } from "../itx/context-lifecycle.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";
import type { RepoDurableObject } from "./repo-durable-object.ts";
import { repoStub } from "./repo-stub.ts";
import { listRepository } from "./repo-seed.ts";
import { REPO_DIRECTORY_PATH, REPO_LISTED } from "./repo-events.ts";
import { CONFIG_REPO_PATH, parseRepoPath } from "./repo-names.ts";

/** What a repos collection is bound to: fixed when it is minted, never taken from input. */
export interface RepoScope {
  env: Env;
  projectId: () => Promise<string>;
  caller: Caller;
}

type RepoStub = DurableObjectStub<RepoDurableObject>;

async function call<T>(answer: Promise<Coded<T>>): Promise<T> {
  return unwrapCoded(await relay(answer));
}

/**
 * `itx.repos` (and, for admins, `session.repos`): the repositories of one project by path. A
 * repository is a context at its path (`/repos/<name>`) with its own stream.
 *
 * @example
 * const site = await itx.repos.create({ path: "/repos/site" });
 * await site.commit({ branch: "main", message: "hello", files: { "index.html": "<h1>hi</h1>" } });
 */
export class ReposRpcTarget extends RpcTarget {
  readonly #scope: RepoScope;

  constructor(scope: RepoScope) {
    super();
    this.#scope = scope;
  }

  /** Get-or-create: the repository at `path`, created (empty, branch `main`) when missing. */
  async create(input: unknown): Promise<RepoRpcTarget> {
    const path = parseRepoPath(typeof input === "object" && input !== null ? (input as { path?: unknown }).path : undefined);
    const projectId = await this.#scope.projectId();
    await ensureRootChild(this.#scope.env, { projectId, path, name: path.slice(path.lastIndexOf("/") + 1), caller: this.#scope.caller }, "repository");
    const { created } = await call(repoStub(this.#scope.env, projectId, path).create(actorOf(this.#scope.caller)));
    if (created) await listRepository(this.#scope.env, projectId, path, this.#scope.caller);
    return new RepoRpcTarget(this.#scope, path);
  }

  /** A handle on the repository at `path`; its calls answer NOT_FOUND until it is created. */
  get(path: unknown): RepoRpcTarget {
    return new RepoRpcTarget(this.#scope, parseRepoPath(path));
  }

  /** Every repository of the project, oldest first. */
  async list(): Promise<Array<{ path: string; createdAt: string }>> {
    const projectId = await this.#scope.projectId();
    const directory = streamStub(this.#scope.env.STREAM, `${projectId}:${REPO_DIRECTORY_PATH}`);
    const repos: Array<{ path: string; createdAt: string }> = [];
    for (let after = 0; ; ) {
      const page = await directory.getEvents({ afterOffset: after, types: [REPO_LISTED], limit: 500 });
      for (const event of page) {
        // Anyone may append to the directory stream; only the platform's own rows count.
        const path = (event.payload as { path?: unknown }).path;
        if (event.source.platform === "repo" && typeof path === "string") repos.push({ path, createdAt: event.createdAt });
      }
      const last = page.at(-1);
      if (!last) return repos; // A short page is not the end: pages stop at READ_PAGE_MAX_BYTES too.
      after = last.offset;
    }
  }
}

/** One repository. Every method answers NOT_FOUND while the repository does not exist. */
export class RepoRpcTarget extends RpcTarget {
  readonly #scope: RepoScope;
  readonly #path: string;

  constructor(scope: RepoScope, path: string) {
    super();
    this.#scope = scope;
    this.#path = path;
  }

  async __describe() {
    const description = await call((await this.#stub()).describe());
    return {
      kind: "repo" as const,
      instructions: "A git repository. Commit files with commit(), read them with readFile()/snapshot(); clone it with git over /git/<project>/<path>.git.",
      children: {
        commit: "commit({ branch?, message, files: { [path]: string | Uint8Array | null }, expectedHead? }) -> { commit, parents, changedPaths, ... }",
        readFile: "readFile({ ref?, path, encoding? }) -> text (or bytes with encoding: 'binary')",
        listFiles: "listFiles({ ref?, include?, exclude? }) -> paths",
        log: "log({ ref?, limit? }) -> commits, newest first",
        branches: "branches() -> [{ name, head }]",
        createBranch: "createBranch({ name, from? })",
        deleteBranch: "deleteBranch({ name, expectedHead? })",
        snapshot: "snapshot({ branch } | { commit }, { include?, exclude? }) -> { commit, files }",
      },
      ...description,
    };
  }

  /** Commits files onto a branch; `expectedHead` makes it compare-and-swap (OFFSET_CONFLICT when stale). */
  async commit(input: unknown) {
    this.#mayChange("commit to");
    return call((await this.#stub()).commit(input, actorOf(this.#scope.caller)));
  }

  async readFile(input: unknown) {
    return call((await this.#stub()).readFile(input));
  }

  async listFiles(input?: unknown) {
    return call((await this.#stub()).listFiles(input));
  }

  async log(input?: unknown) {
    return call((await this.#stub()).log(input));
  }

  async branches() {
    return call((await this.#stub()).branches());
  }

  async createBranch(input: unknown) {
    this.#mayChange("create branches in");
    return call((await this.#stub()).createBranch(input, actorOf(this.#scope.caller)));
  }

  async deleteBranch(input: unknown) {
    this.#mayChange("delete branches of");
    return call((await this.#stub()).deleteBranch(input, actorOf(this.#scope.caller)));
  }

  /** An inert file map of a branch (its head now) or a commit, masked by globs. */
  async snapshot(at: unknown, masks?: unknown) {
    return call((await this.#stub()).snapshot(at, masks));
  }

  // The config repository's code is the project worker, which acts as the root: a change to it
  // is the root's to make. Code acting as any other context (an agent's script) would otherwise
  // write the code that then runs as the root; authority flows down the tree, never up.
  #mayChange(what: string): void {
    if (this.#path !== CONFIG_REPO_PATH || this.#scope.caller.origin === "/") return;
    throw new ItxError("PERMISSION_DENIED", `code acting as ${this.#scope.caller.origin} cannot ${what} ${CONFIG_REPO_PATH}: its code runs as the project's root, so only the root changes it`, {
      details: { reason: "config-repo-root-only" },
    });
  }

  async #stub(): Promise<RepoStub> {
    return repoStub(this.#scope.env, await this.#scope.projectId(), this.#path);
  }
}

function actorOf(caller: Caller): { principal: string; origin: string } {
  return { principal: caller.principal, origin: caller.origin };
}
