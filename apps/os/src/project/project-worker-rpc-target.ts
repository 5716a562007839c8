import { RpcTarget } from "cloudflare:workers";
import { relay } from "../api/relay.ts";
import { throwCoded } from "../api/coded-result.ts";
import { installInvokeFallback } from "../itx/invoke-fallback.ts";

interface WorkerScope {
  env: Env;
  projectId: () => Promise<string>;
  /** The context calling: the worker reads it as `this.callerPath()`. */
  callerPath: string;
}

/**
 * `itx.worker`: a stub on the project's certified worker (the `worker.ts` of `/repos/config`).
 * Any method it exposes is callable from every context of the project, `itx.worker.greet("x")`
 * being one `invokeCapability({ path: ["greet"], args: ["x"] })`. The worker acts as the root;
 * it learns which context called from `this.callerPath()`.
 */
export class ProjectWorkerRpcTarget extends RpcTarget {
  readonly #scope: WorkerScope;

  constructor(scope: WorkerScope) {
    super();
    this.#scope = scope;
  }

  async __describe(): Promise<{ kind: string; instructions: string; children: Record<string, string> }> {
    return {
      kind: "project-worker",
      instructions: "The project's own worker, built from worker.ts in /repos/config. Call its methods as itx.worker.<method>(...args).",
      children: {},
    };
  }

  async invokeCapability(input: { path: string[]; args: unknown[] }): Promise<unknown> {
    const projectId = await this.#scope.projectId();
    const host = this.#scope.env.PROJECT.getByName(`${projectId}:/`);
    return throwCoded(await relay(host.callWorker({ path: input.path, args: input.args, callerPath: this.#scope.callerPath })));
  }
}
installInvokeFallback(ProjectWorkerRpcTarget);
