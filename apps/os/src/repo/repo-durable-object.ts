import { DurableObject } from "cloudflare:workers";
import { ItxError } from "iterate/errors";
import { asCoded, type Coded } from "../api/coded-result.ts";
import { coordinateOfObject } from "../stream/coordinate.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";
import { LIMITS, limitDetails } from "../limits.ts";
import { pathFilter } from "./glob.ts";
import { REPO_COMMIT_COMPLETED, REPO_CREATED, type CommitCompleted } from "./repo-events.ts";
import { parseCommitRequest, parseLogLimit, parseOptions, parseRef } from "./repo-input.ts";
import { CONFIG_REPO_PATH, DEFAULT_BRANCH, parseBranchName, parseFilePath } from "./repo-names.ts";
import { RepoStore, type Actor, type LogEntry } from "./repo-store.ts";
import { receivePack, uploadPack, type RefAdvertisement } from "./repo-pack.ts";

/** What `describe` answers about a repository. */
export interface RepoDescription {
  path: string;
  defaultBranch: string;
  createdAt: string;
  branches: Array<{ name: string; head: string }>;
  sizeBytes: number;
}

const DECODER = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * One repository, named `<projectId>:<path>`: git objects and refs in this object's SQLite (see
 * repo-store.ts), and its facts on the stream at its path. Facts are queued with the ref moves
 * that cause them and delivered afterwards (`#deliver`), retried by alarm until the stream has
 * them, so a restart between the two loses none.
 */
export class RepoDurableObject extends DurableObject<Env> {
  readonly #projectId: string;
  readonly #path: string;
  readonly #store: RepoStore;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ({ projectId: this.#projectId, path: this.#path } = coordinateOfObject(ctx.id, "a repository"));
    this.#store = new RepoStore(ctx.storage);
  }

  /** Get-or-create: answers whether this call created it. */
  create(actor: Actor): Promise<Coded<{ created: boolean }>> {
    return this.#mutate(() => ({
      created: this.#store.refs.create(DEFAULT_BRANCH, { type: REPO_CREATED, payload: { path: this.#path, defaultBranch: DEFAULT_BRANCH }, ...actor }),
    }));
  }

  /**
   * Get-or-create with a first commit: creates the repository when missing and, when the commit's
   * branch has no head yet, commits to it; answers the branch's head and whether this call made it.
   * One call and one delivery of facts where create, branches and commit took three.
   */
  seed(input: unknown, actor: Actor): Promise<Coded<{ commit: string; committed: boolean }>> {
    return this.#mutate(async () => {
      this.#store.refs.create(DEFAULT_BRANCH, { type: REPO_CREATED, payload: { path: this.#path, defaultBranch: DEFAULT_BRANCH }, ...actor });
      const request = parseCommitRequest(input, this.#default());
      const head = this.#store.refs.get(`refs/heads/${request.branch}`);
      if (head) return { commit: head, committed: false };
      const { commit } = await this.#store.commit({ ...request, expectedHead: null }, actor);
      return { commit, committed: true };
    });
  }

  describe(): Promise<Coded<RepoDescription>> {
    return asCoded(() => {
      const defaultBranch = this.#default();
      const meta = this.#store.refs.meta();
      return {
        path: this.#path,
        defaultBranch,
        createdAt: meta?.createdAt ?? "",
        branches: this.#store.branches(),
        sizeBytes: this.#store.fs.storedBytes(),
      };
    });
  }

  commit(input: unknown, actor: Actor): Promise<Coded<CommitCompleted>> {
    return this.#mutate(() => this.#store.commit(parseCommitRequest(input, this.#default()), actor));
  }

  /** A file at a ref: text as a string, or bytes with `encoding: "binary"`. */
  readFile(input: unknown): Promise<Coded<string | Uint8Array>> {
    return asCoded(async () => {
      const options = parseOptions(input, ["ref", "path", "encoding"], "readFile");
      const ref = parseRef(options.ref, this.#default());
      const path = parseFilePath(options.path);
      if (options.encoding !== undefined && options.encoding !== "utf8" && options.encoding !== "binary") {
        throw new ItxError("INVALID_ARGUMENT", 'encoding is "utf8" (default) or "binary"');
      }
      const bytes = await this.#store.readFile(ref, path);
      if (options.encoding === "binary") return bytes;
      try {
        return DECODER.decode(bytes);
      } catch {
        throw new ItxError("INVALID_ARGUMENT", `${path} is not UTF-8 text; read it with encoding: "binary"`);
      }
    });
  }

  listFiles(input: unknown): Promise<Coded<string[]>> {
    return asCoded(async () => {
      const options = parseOptions(input, ["ref", "include", "exclude"], "listFiles");
      const keep = pathFilter(options);
      return (await this.#store.files(parseRef(options.ref, this.#default()))).map(([path]) => path).filter(keep);
    });
  }

  log(input: unknown): Promise<Coded<LogEntry[]>> {
    return asCoded(async () => {
      const options = parseOptions(input, ["ref", "limit"], "log");
      return this.#store.log(parseRef(options.ref, this.#default()), parseLogLimit(options.limit));
    });
  }

  branches(): Promise<Coded<Array<{ name: string; head: string }>>> {
    return asCoded(() => {
      this.#default();
      return this.#store.branches();
    });
  }

  createBranch(input: unknown, actor: Actor): Promise<Coded<{ name: string; head: string }>> {
    return this.#mutate(async () => {
      const options = parseOptions(input, ["name", "from"], "createBranch");
      return this.#store.createBranch(parseBranchName(options.name), parseRef(options.from, this.#default()), actor);
    });
  }

  deleteBranch(input: unknown, actor: Actor): Promise<Coded<{ deleted: true }>> {
    return this.#mutate(async () => {
      const options = parseOptions(input, ["name", "expectedHead"], "deleteBranch");
      const expected = options.expectedHead;
      if (expected !== undefined && typeof expected !== "string") throw new ItxError("INVALID_ARGUMENT", "expectedHead is a commit id");
      await this.#store.deleteBranch(parseBranchName(options.name), this.#default(), expected, actor);
      return { deleted: true as const };
    });
  }

  /**
   * The files at a branch (its head now) or a commit, masked by globs: inert data, text as
   * strings and other files as bytes. `commit` says which commit was read.
   */
  snapshot(input: unknown, masks: unknown): Promise<Coded<{ commit: string; files: Record<string, string | Uint8Array> }>> {
    return asCoded(async () => {
      const at = parseOptions(input, ["branch", "commit"], "snapshot");
      if ((at.branch === undefined) === (at.commit === undefined)) throw new ItxError("INVALID_ARGUMENT", "snapshot takes { branch } or { commit }");
      const commit = await this.#store.resolve(parseRef(at.branch ?? at.commit, this.#default()));
      const keep = pathFilter(parseOptions(masks, ["include", "exclude"], "snapshot"));
      const files: Record<string, string | Uint8Array> = {};
      let total = 0;
      for (const [path, oid] of await this.#store.files(commit)) {
        if (!keep(path)) continue;
        const bytes = await this.#store.blob(oid);
        total += bytes.byteLength;
        if (total > LIMITS.REPO_SNAPSHOT_MAX_BYTES) {
          throw new ItxError("INVALID_ARGUMENT", `the snapshot is larger than ${LIMITS.REPO_SNAPSHOT_MAX_BYTES} bytes; narrow it with include/exclude`, {
            details: limitDetails("REPO_SNAPSHOT_MAX_BYTES"),
          });
        }
        try {
          files[path] = DECODER.decode(bytes);
        } catch {
          files[path] = bytes;
        }
      }
      return { commit, files };
    });
  }

  /** The refs a git client is shown, and where HEAD points. NOT_FOUND before creation. */
  advertise(): Promise<Coded<RefAdvertisement>> {
    return asCoded(() => ({ defaultBranch: this.#default(), refs: this.#store.refs.all() }));
  }

  /** git-upload-pack: the pack holding what `wants` reach and `haves` do not, as a stream. */
  uploadPack(input: { wants: string[]; haves: string[] }): Promise<Coded<{ pack: ReadableStream<Uint8Array>; common: string[] }>> {
    return asCoded(async () => {
      this.#default();
      return uploadPack(this.#store, input.wants, input.haves);
    });
  }

  /** git-receive-pack: stores the pack and moves the refs; answers each ref's status line. */
  receivePack(input: { commands: Array<{ from: string | null; to: string | null; ref: string }>; pack: Uint8Array | null }, actor: Actor): Promise<Coded<Array<{ ref: string; error?: string }>>> {
    return this.#mutate(() => {
      this.#default();
      return receivePack(this.#store, input.commands, input.pack, actor);
    });
  }

  override async alarm(): Promise<void> {
    await this.#deliver();
  }

  /**
   * Runs a change, then delivers its facts (a failed delivery is retried by alarm, not reported).
   * Changes run one at a time: they share the object store's stage, and one change's refusal
   * discards the stage (see sqlite-fs.ts), which must never drop another change's objects.
   */
  #mutate<T>(work: () => T | Promise<T>): Promise<Coded<T>> {
    const run = this.#queue.then(async () => {
      await this.#deliver();
      const answer = await asCoded(work);
      await this.#deliver();
      return answer;
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #deliver(): Promise<void> {
    const pending = this.#store.refs.pending();
    if (pending.length === 0) return;
    const stream = streamStub(this.env.STREAM, `${this.#projectId}:${this.#path}`);
    try {
      // Consecutive facts with the same writer go in one append.
      for (let i = 0; i < pending.length; ) {
        const first = pending[i];
        if (!first) break;
        const batch = [first];
        while (batch.length < 100) {
          const next = pending[i + batch.length];
          if (!next || next.event.principal !== first.event.principal || next.event.origin !== first.event.origin) break;
          batch.push(next);
        }
        const stamp = { principal: first.event.principal, origin: first.event.origin, platform: "repo" };
        await stream.append({
          events: batch.map(({ seq, event }) => ({ type: event.type, payload: event.payload, idempotencyKey: `repo/fact:${seq}` })),
          stamp,
          answer: "receipt",
        });
        // The config repository's commits are copied onto the project's root stream, where the
        // Project processor certifies each new head as the project's worker (project/project-processor.ts).
        const copies = this.#path === CONFIG_REPO_PATH ? batch.filter(({ event }) => event.type === REPO_COMMIT_COMPLETED) : [];
        if (copies.length > 0) {
          await streamStub(this.env.STREAM, `${this.#projectId}:/`).append({
            events: copies.map(({ seq, event }) => ({
              type: event.type,
              payload: { ...(event.payload as object), repo: this.#path },
              idempotencyKey: `repo/config-commit:${seq}`,
            })),
            stamp,
            answer: "receipt",
          });
        }
        this.#store.refs.delivered(batch.at(-1)?.seq ?? 0);
        i += batch.length;
      }
    } catch (error) {
      console.warn(`repo ${this.#path}: facts not delivered yet, retrying`, error);
      await this.ctx.storage.setAlarm(Date.now() + 1000);
    }
  }

  #default(): string {
    return this.#store.defaultBranch(this.#path);
  }
}
