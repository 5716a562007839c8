import { errorCode, ItxError } from "iterate/errors";
import { LIMITS } from "../limits.ts";
import { RunBudget } from "../scheduler/run-budget.ts";
import { StreamProcessorDurableObject } from "iterate/sdk";
import { relay } from "../api/relay.ts";
import { answerCoded, unwrapCoded } from "../api/coded-result.ts";
import { ensureContext } from "../itx/context-lifecycle.ts";
import { repoStub } from "../repo/repo-stub.ts";
import { seedRepository } from "../repo/repo-seed.ts";
import { coordinateOfObject } from "../stream/coordinate.ts";
import { StreamRpcTarget, streamStub } from "../stream/stream-rpc-target.ts";
import type { IsolateProps } from "../worker-loader/isolate-props.ts";
import type { BuiltWorker } from "../worker-loader/worker-build.ts";
import { HeldRunner } from "../worker-loader/runner-client.ts";
import { CONFIG_TEMPLATE_FILES } from "./config-template.generated.ts";
import { CONFIG_BRANCH, CONFIG_REPO, type ProjectState } from "./project-contract.ts";
import { ProjectProcessor, type ProjectEffects } from "./project-processor.ts";
import { artifactKey, buildConfigWorker, CONFIG_WORKER_INCLUDE, workerFiles } from "./project-worker-build.ts";
import { ArtifactStore } from "./artifact-store.ts";
import { callConfigWorker, probeConfigWorker } from "./project-worker-call.ts";

/**
 * The prebuilt seed artifacts (by hash) that answered a readiness probe in this isolate of the OS.
 * The seed is built by the generator, the same for every project, and checked by its tests; so
 * each OS isolate probes it once, not once per project (the project's own first load is its
 * worker feed's first delivery, right after project/created).
 */
const SEED_PROBED = new Set<string>();

/**
 * Hosts a project's Project processor, named by its root coordinate `<projectId>:/`: the root
 * stream wakes it through the `project` subscription that `projects.create` appends. It also
 * serves the certified project worker: HTTP ingress (`serveHttp`) and `itx.worker` (`callWorker`).
 */
export class ProjectDurableObject extends StreamProcessorDurableObject<Env> {
  readonly processor: ProjectProcessor;
  readonly #projectId: string;
  readonly #artifacts: ArtifactStore;
  /** This object's open session into the runner (local OS only), for its calls on the project worker. */
  readonly #runner = new HeldRunner();
  /** The commit this incarnation seeded from the template: its files are known without reading them back. */
  #seeded: string | undefined;
  readonly #scheduledRuns = new RunBudget(() => LIMITS.SCHEDULED_RUNS_PER_PROJECT_PER_MINUTE);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ({ projectId: this.#projectId } = coordinateOfObject(ctx.id, "a project host"));
    this.#artifacts = new ArtifactStore(ctx.storage.sql);
    const effects: ProjectEffects = {
      ensureRootContext: async (record, principal) => {
        await this.#watchdog();
        await ensureContext(env, { projectId: this.#projectId, path: "/", name: record.slug, parent: null, ancestors: [], caller: { principal, origin: "/" } });
      },
      seedConfigRepo: (_record, principal) => this.#seed(principal),
      buildAndProbe: async (at, state) => {
        await this.#watchdog();
        return this.#buildAndProbe(at, state);
      },
      deliver: async (event, state) => {
        // A delivery cut off by a restart is driven again by the next incarnation: the alarm brings
        // it up even when nothing else reaches the project (stream/woken coalesces into the pending one).
        await this.#watchdog();
        return this.#deliver(event, state);
      },
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    };
    this.processor = new ProjectProcessor(effects);
  }

  /**
   * Revives a run whose incarnation died. The root stream wakes this host only when it has events
   * to deliver, and a run that died between two facts leaves none: the alarm set while the run
   * works wakes the processor from here, and its at-head pass drives the run again.
   */
  override async alarm(): Promise<void> {
    await this.#wake();
    await super.alarm();
  }

  // Wakes the processor from this side, as the root stream would: it catches up from its checkpoint.
  async #wake(force = false): Promise<void> {
    if (this.woken && !force) return;
    await this.wakeStreamProcessor({ name: "project", stream: this.openStream(), coordinate: `${this.#projectId}:/` });
  }

  protected override openStream(): StreamRpcTarget {
    return new StreamRpcTarget(streamStub(this.env.STREAM, `${this.#projectId}:/`), { platform: "processor-host:project" });
  }

  // While a run works, an alarm stands to revive it should this incarnation die.
  async #watchdog(): Promise<void> {
    const at = await this.ctx.storage.getAlarm();
    if (at === null) await this.ctx.storage.setAlarm(Date.now() + 5_000);
  }

  /**
   * Admits one scheduled occurrence of this project's schedules, or answers false past
   * SCHEDULED_RUNS_PER_PROJECT_PER_MINUTE (see scheduler/run-budget.ts): however many schedules
   * and contexts a project holds, what they run together stays within one budget.
   */
  admitScheduledRun(): boolean {
    return this.#scheduledRuns.admit();
  }

  /** The processor's folded state, for tests and `__describe()`. */
  async state(): Promise<{ offset: number; state: ProjectState }> {
    // A fresh incarnation's checkpoint may lag the stream (its delivery waits on a retry): catch up first.
    await this.#wake();
    let snapshot = await this.snapshot();
    // No worker yet: facts may be on the stream that its delivery has not brought; read them now.
    if ((snapshot.state as ProjectState).worker === null) {
      await this.#wake(true);
      snapshot = await this.snapshot();
    }
    return { offset: snapshot.offset, state: snapshot.state as ProjectState };
  }

  /** HTTP for the project's host: the certified worker's fetch, or 503 when there is none. */
  async serveHttp(request: Request): Promise<Response> {
    const { state } = await this.state();
    const built = state.worker ? this.#artifacts.get(state.worker.hash) ?? (await this.#rebuild(state)) : undefined;
    if (!built || !state.record) return unavailable(`project ${state.record?.slug ?? ""} has no working worker yet`.replace("  ", " "));
    try {
      const answer = await callConfigWorker(this.env, built, this.#isolate(state), { callerPath: "/", projectSlug: state.record.slug }, ["fetch"], [request], this.#runner);
      if (answer instanceof Response) return answer;
      return Response.json({ code: "INTERNAL", message: "the project worker's fetch did not answer a Response" }, { status: 502 });
    } catch (error) {
      return Response.json({ code: errorCode(error) ?? "INTERNAL", message: "the project worker failed to answer" }, { status: 502 });
    }
  }

  /**
   * `itx.worker.<path>(...args)` from the context `callerPath`: a method of the certified worker.
   * Expected failures are answered as coded values (unwrapCoded throws them on the caller's side),
   * never thrown across the Durable Object boundary.
   */
  callWorker(input: { path: string[]; args: unknown[]; callerPath: string }): Promise<unknown> {
    return answerCoded(() => this.#callWorker(input));
  }

  async #callWorker(input: { path: string[]; args: unknown[]; callerPath: string }): Promise<unknown> {
    const { state } = await this.state();
    if (!state.worker || !state.record) throw new ItxError("NOT_FOUND", "this project has no worker yet");
    // Lifecycle events come from the platform's feed only: nobody may hand the worker a forged one.
    if (input.path[0] === "processEvent") throw new ItxError("NOT_FOUND", "the project worker has no method processEvent for callers");
    const built = this.#artifacts.get(state.worker.hash) ?? (await this.#rebuild(state));
    return callConfigWorker(this.env, built, this.#isolate(state), { callerPath: input.callerPath, projectSlug: state.record.slug }, input.path, input.args, this.#runner);
  }

  /**
   * The certified worker, for code that runs its exports elsewhere (config-repo processors): its
   * artifact hash, the authority it runs with, and the artifact itself unless the caller has it
   * (`knownHash`). Null before the project has a worker.
   */
  certifiedWorker(knownHash?: string): Promise<CertifiedWorker | null | CodedFailureAnswer> {
    return answerCoded(async () => {
      const { state } = await this.state();
      if (!state.worker || !state.record) return null;
      const hash = state.worker.hash;
      if (hash === knownHash) return { hash, isolate: this.#isolate(state) };
      const built = this.#artifacts.get(hash) ?? (await this.#rebuild(state));
      return { hash, isolate: this.#isolate(state), built };
    });
  }

  // The project worker acts at the root, as the principal who created the project.
  #isolate(state: ProjectState): IsolateProps {
    return { principal: state.principal, projectId: this.#projectId, origin: "/", path: "/", depth: 0 };
  }

  async #seed(principal: string): Promise<{ commit: string }> {
    const seeded = await seedRepository(this.env, {
      projectId: this.#projectId,
      path: CONFIG_REPO,
      caller: { principal, origin: "/" },
      branch: CONFIG_BRANCH,
      message: "Seed from the template configs/default",
      files: { ...CONFIG_TEMPLATE_FILES },
    });
    // Only a commit this call made is known to hold the template; an earlier one is read back.
    if (seeded.committed) this.#seeded = seeded.commit;
    return { commit: seeded.commit };
  }

  async #buildAndProbe(at: { commit: string } | { head: true }, state: ProjectState): Promise<{ commit: string; hash: string }> {
    if (!state.record) throw new ItxError("INVALID_ARGUMENT", "no project record");
    const snapshotAt = "commit" in at ? { commit: at.commit } : { branch: CONFIG_BRANCH };
    let snapshot: { commit: string; files: Record<string, string | Uint8Array> };
    if ("commit" in at && at.commit === this.#seeded) {
      // Creation's own seed commit: its code is the template's, so the read-back is skipped.
      const built = await this.#artifact(workerFiles(CONFIG_TEMPLATE_FILES));
      // The prebuilt seed is the same code for every project: once it answered here, it answers.
      if (!SEED_PROBED.has(built.hash)) {
        await probeConfigWorker(this.env, built, this.#isolate(state), { callerPath: "/", projectSlug: state.record.slug }, this.#runner);
        SEED_PROBED.add(built.hash);
      }
      return { commit: at.commit, hash: built.hash };
    }
    try {
      snapshot = unwrapCoded(await relay(repoStub(this.env, this.#projectId, CONFIG_REPO).snapshot(snapshotAt, { include: CONFIG_WORKER_INCLUDE })));
    } catch (error) {
      if (errorCode(error) === "NOT_FOUND") throw new ItxError("INVALID_ARGUMENT", `${CONFIG_REPO} has no ${JSON.stringify(snapshotAt)}`);
      throw error;
    }
    const files: Record<string, string> = {};
    for (const [path, content] of Object.entries(snapshot.files)) if (typeof content === "string") files[path] = content;
    const built = await this.#artifact(files);
    await probeConfigWorker(this.env, built, this.#isolate(state), { callerPath: "/", projectSlug: state.record.slug }, this.#runner);
    return { commit: snapshot.commit, hash: built.hash };
  }

  async #artifact(files: Record<string, string>): Promise<BuiltWorker> {
    const hash = await artifactKey(files);
    const stored = this.#artifacts.get(hash);
    if (stored) return stored;
    const built = await buildConfigWorker(files, hash);
    this.#artifacts.put(built);
    return built;
  }

  // The artifact was evicted (or too big to keep): build the certified commit again.
  async #rebuild(state: ProjectState): Promise<BuiltWorker> {
    if (!state.worker) throw new ItxError("NOT_FOUND", "this project has no worker yet");
    const snapshot = unwrapCoded(await relay(repoStub(this.env, this.#projectId, CONFIG_REPO).snapshot({ commit: state.worker.commit }, { include: CONFIG_WORKER_INCLUDE })));
    const files: Record<string, string> = {};
    for (const [path, content] of Object.entries(snapshot.files)) if (typeof content === "string") files[path] = content;
    return this.#artifact(files);
  }

  async #deliver(offset: number, current: () => ProjectState): Promise<void> {
    // project/created's worker is certified by the next event of its commit: wait for the fold to reach it.
    for (let tries = 0; current().worker === null && tries < 100; tries++) await new Promise((resolve) => setTimeout(resolve, 20));
    const state = current();
    if (!state.worker || !state.record) return;
    const [event] = await streamStub(this.env.STREAM, `${this.#projectId}:/`).getEvents({ afterOffset: offset - 1, beforeOffset: offset + 1, limit: 1 });
    if (!event) return;
    const built = this.#artifacts.get(state.worker.hash) ?? (await this.#rebuild(state));
    try {
      await callConfigWorker(this.env, built, this.#isolate(state), { callerPath: "/", projectSlug: state.record.slug }, ["processEvent"], [event], this.#runner);
    } catch (error) {
      // A worker without processEvent takes no lifecycle events: that is its choice, not a failure.
      if (String(error).includes("does not implement the method")) return;
      throw error;
    }
  }
}

/** The project's certified worker as `certifiedWorker` answers it. */
export interface CertifiedWorker {
  hash: string;
  /** The authority its code runs with: the root, as the project's creator. */
  isolate: IsolateProps;
  /** Absent when the caller already holds this hash. */
  built?: BuiltWorker;
}

type CodedFailureAnswer = { __itxCodedFailure: { code: string; message: string } };

function unavailable(message: string): Response {
  return Response.json({ code: "UNAVAILABLE", message }, { status: 503, headers: { "retry-after": "5" } });
}
