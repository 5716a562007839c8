import { RpcTarget } from "cloudflare:workers";
import type { Principal } from "iterate/types";
import { ItxError } from "iterate/errors";
import type { Connection } from "../api/connection.ts";
import { ItxRpcTarget } from "../itx/itx-rpc-target.ts";
import { findProject, listProjects, parseProjectSlug, type ProjectRecord } from "./project-directory.ts";
import { createProject, requestCreation, type CreateOptions } from "./project-lifecycle.ts";
import { installMissingMemberError } from "../api/missing-member.ts";

/**
 * What a session may reach: every project (admin), or the projects its credential names plus the
 * ones the principal created (recorded in the directory, so they stay reachable after reconnecting).
 */
export class ProjectAccess {
  readonly principal: Principal;
  readonly #ids: Set<string>;

  constructor(principal: Principal) {
    this.principal = principal;
    this.#ids = new Set(principal.kind === "admin" ? [] : principal.projectIds);
  }

  allows(record: ProjectRecord): boolean {
    if (this.principal.kind === "admin" || this.#ids.has(record.projectId)) return true;
    return record.createdBy !== undefined && record.createdBy === this.principal.id;
  }

  /** The creator, as the directory records it: only non-admin principals are recorded. */
  get creator(): string | undefined {
    return this.principal.kind === "admin" ? undefined : this.principal.id;
  }
}

/**
 * `session.projects`. A project the principal may not see answers exactly like one that does not
 * exist: the same code and the same message, built only from what the caller typed.
 */
export class ProjectCollectionRpcTarget extends RpcTarget {
  readonly #env: Env;
  readonly #access: ProjectAccess;
  readonly #connection: Connection | undefined;

  constructor(env: Env, access: ProjectAccess, connection?: Connection) {
    super();
    this.#env = env;
    this.#access = access;
    this.#connection = connection;
  }

  async list(): Promise<Array<{ id: string; slug: string }>> {
    const all = await listProjects(this.#env);
    return all.filter((record) => this.#access.allows(record)).map(({ projectId, slug }) => ({ id: projectId, slug }));
  }

  /** A handle on a project by slug or id. Nothing is created; calls on a missing project fail with NOT_FOUND. */
  get(slugOrId: unknown): ProjectRootRpcTarget {
    if (typeof slugOrId !== "string" || slugOrId.length === 0 || slugOrId.length > 128) {
      throw new ItxError("INVALID_ARGUMENT", "projects.get takes a project slug or id");
    }
    // Looked up on first use and remembered once found, so `create()` on a missing project's
    // handle makes the same handle usable.
    let found: Promise<string> | undefined;
    return this.#handle(slugOrId, () => {
      found ??= this.#resolve(slugOrId).catch((error: unknown) => {
        found = undefined;
        throw error;
      });
      return found;
    });
  }

  /**
   * Creates a project and answers its root context, once `project/created` landed (or at once
   * with `waitUntilCreated: false`: the root stream shows creation's steps as they land).
   */
  async create(input: { slug?: unknown; waitUntilCreated?: unknown }): Promise<ProjectRootRpcTarget> {
    if (typeof input !== "object" || input === null) throw new ItxError("INVALID_ARGUMENT", "projects.create takes { slug, waitUntilCreated? }");
    const { slug, waitUntilCreated, ...rest } = input;
    if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `projects.create has no field(s) ${Object.keys(rest).join(", ")}`);
    const record = await this.#create(parseProjectSlug(slug), parseCreateOptions(waitUntilCreated));
    return this.#handle(record.slug, () => Promise.resolve(record.projectId));
  }

  async #create(slug: string, options: CreateOptions): Promise<ProjectRecord> {
    return createProject(this.#env, slug, this.#access.principal.id, this.#access.creator, options);
  }

  async #resolve(slugOrId: string): Promise<string> {
    const record = await findProject(this.#env, slugOrId);
    if (!record || !this.#access.allows(record)) throw missing(slugOrId);
    return record.projectId;
  }

  #handle(slugOrId: string, projectId: () => Promise<string>): ProjectRootRpcTarget {
    return new ProjectRootRpcTarget(
      {
        env: this.#env,
        principal: this.#access.principal.id,
        projectId,
        path: "/",
        origin: "/",
        ...(this.#connection ? { connection: this.#connection } : {}),
      },
      async (options) => {
        const existing = await findProject(this.#env, slugOrId);
        if (existing) {
          // Slug existence is public (docs/security.md): everything else about the project is not.
          if (!this.#access.allows(existing)) throw new ItxError("INVALID_ARGUMENT", `the project slug "${slugOrId}" is taken`);
          // Repairs a project whose creation stopped part-way (its slug claimed, nothing else):
          // the request is keyed, so for a created project this only waits for the fact that stands.
          await requestCreation(this.#env, existing, this.#access.principal.id, options);
          return;
        }
        await this.#create(parseProjectSlug(slugOrId), options);
      },
    );
  }
}
installMissingMemberError(ProjectCollectionRpcTarget, "projects");

/** A project's root context, as `projects.get` answers it: an itx plus `create()`. */
export class ProjectRootRpcTarget extends ItxRpcTarget {
  readonly #create: (options: CreateOptions) => Promise<void>;

  constructor(scope: ConstructorParameters<typeof ItxRpcTarget>[0], create: (options: CreateOptions) => Promise<void>) {
    super(scope);
    this.#create = create;
  }

  /**
   * Creates the project this handle names if it does not exist yet (or finishes a creation that
   * stopped part-way), waiting for `project/created` unless `waitUntilCreated: false`.
   */
  async create(input?: { waitUntilCreated?: unknown }): Promise<{ created: boolean }> {
    if (input !== undefined && (typeof input !== "object" || input === null)) throw new ItxError("INVALID_ARGUMENT", "create takes { waitUntilCreated? }");
    const { waitUntilCreated, ...rest } = input ?? {};
    if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `create has no field(s) ${Object.keys(rest).join(", ")}`);
    const options = parseCreateOptions(waitUntilCreated);
    await this.#create(options);
    return { created: options.waitUntilCreated !== false };
  }
}

function parseCreateOptions(waitUntilCreated: unknown): CreateOptions {
  if (waitUntilCreated === undefined) return {};
  if (typeof waitUntilCreated !== "boolean") throw new ItxError("INVALID_ARGUMENT", "waitUntilCreated is a boolean");
  return { waitUntilCreated };
}

function missing(slugOrId: string): ItxError {
  return new ItxError("NOT_FOUND", `no project ${JSON.stringify(slugOrId)}`);
}
