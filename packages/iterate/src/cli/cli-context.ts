import { connectItx } from "../client/connect-itx.ts";
import type { CliIo } from "./io.ts";
import { withProgress } from "./progress.ts";
import { forTerminal, human } from "./render.ts";
import { isLoopback, resolveTarget, UsageError, type GlobalOptions, type Target } from "./target.ts";

/** A Cap'n Web stub: its surface is dynamic (capability paths), so commands treat it as such. */
// oxlint-disable-next-line typescript/no-explicit-any -- stubs are dynamic over RPC
export type Stub = any;

/**
 * What a command runs with: the streams, the resolved OS and credentials, one connection opened
 * on first use (closed by `close()` when the command ends), and output in the chosen format.
 */
export class CliContext {
  readonly io: CliIo;
  #options: GlobalOptions = {};
  #target: Target | undefined;
  #session: Stub | undefined;

  constructor(io: CliIo) {
    this.io = io;
  }

  /** Set by the program from the global options before a command runs. */
  setOptions(options: GlobalOptions): void {
    this.#options = options;
  }

  get json(): boolean {
    return this.#options.json === true;
  }

  /** The OS and credentials; resolved once, on first use. */
  get target(): Target {
    this.#target ??= resolveTarget(this.#options, this.io.env, (line) => this.io.stderr.write(`iterate: warning: ${line}\n`));
    return this.#target;
  }

  /** Fixes the target without resolving credentials (`login` brings its own). */
  useTarget(target: Pick<Target, "baseUrl" | "profile" | "authSource">): void {
    this.#target = { ...target, local: isLoopback(target.baseUrl), auth: undefined };
  }

  /** The target if it was resolved (for error messages); never resolves it. */
  get resolvedTarget(): Target | undefined {
    return this.#target;
  }

  /** The authenticated Session (pipelined: the first call pays the round trip). */
  session(): Stub {
    if (this.#session !== undefined) return this.#session;
    const { auth, baseUrl } = this.target;
    if (auth === undefined) {
      throw new UsageError(`no credentials for ${baseUrl}: run \`iterate login --base-url ${baseUrl}\`, or set ITERATE_ADMIN_SECRET or ITERATE_TOKEN`);
    }
    this.#session = connectItx({ baseUrl, auth });
    return this.#session;
  }

  /**
   * The context `slug[:/path]` names: the project's root, or `cd(path)` from it (same origin).
   * Without one, ITERATE_PROJECT; without that, a usage error.
   */
  context(spec: string | undefined): Stub {
    const given = spec ?? this.io.env.ITERATE_PROJECT;
    if (given === undefined || given === "") throw new UsageError("name a project: --project <slug>[:/path] (or set ITERATE_PROJECT)");
    const colon = given.indexOf(":");
    const project = colon === -1 ? given : given.slice(0, colon);
    const path = colon === -1 ? "/" : given.slice(colon + 1);
    if (project === "") throw new UsageError(`--project must start with a project slug, got ${JSON.stringify(given)}`);
    const root = this.session().projects.get(project);
    return path === "/" ? root : root.cd(path);
  }

  /** Awaits `work`, with a progress line on a terminal when it takes more than a second. */
  step<T>(label: string, work: PromiseLike<T>): Promise<T> {
    return withProgress(this.io.stderr, label, work);
  }

  /** Prints a command's answer: JSON with --json, else `text` (or a readable rendering of it). */
  print(value: unknown, text?: string): void {
    if (this.json) this.io.stdout.write(`${JSON.stringify(value ?? null)}\n`);
    else {
      const shown = forTerminal(text ?? human(value));
      if (shown !== "") this.io.stdout.write(`${shown}\n`);
    }
  }

  /** Closes the connection, if one was opened. */
  close(): void {
    const session = this.#session;
    this.#session = undefined;
    session?.[Symbol.dispose]();
  }
}
