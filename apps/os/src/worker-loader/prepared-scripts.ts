import { errorMessage } from "iterate/errors";
import { contentHash } from "./content-hash.ts";
import { guardLoops, guardName } from "./loop-guard.ts";
import { scriptModule } from "./script-module.ts";
import { LIMITS } from "../limits.ts";

/** A script ready to load (its module, and a hash of its source for isolate ids), or why it cannot run. */
export type PreparedScript = { ok: true; hash: string; module: string } | { ok: false; message: string };

/**
 * Prepared scripts by source, least recently used first. Parsing and guarding are pure work on
 * the source, so a script run again (the same check, the same tool call) skips them.
 */
export class PreparedScripts {
  readonly #maxChars: number;
  readonly #bySource = new Map<string, PreparedScript>();
  // Preparations under way, so a source asked for twice at once is parsed once.
  readonly #pending = new Map<string, Promise<PreparedScript>>();
  #chars = 0;

  constructor(maxChars: number = LIMITS.PREPARED_SCRIPTS_MAX_CHARS) {
    this.#maxChars = maxChars;
  }

  /** Characters held now. */
  get chars(): number {
    return this.#chars;
  }

  /** Parses and guards `source` (a syntax error names its line), or answers the earlier result. */
  async prepare(source: string): Promise<PreparedScript> {
    const known = this.#bySource.get(source);
    if (known) {
      this.#bySource.delete(source);
      this.#bySource.set(source, known);
      return known;
    }
    const pending = this.#pending.get(source);
    if (pending) return pending;
    const preparing = prepare(source).then((script) => {
      this.#remember(source, script);
      return script;
    });
    this.#pending.set(source, preparing);
    try {
      return await preparing;
    } finally {
      this.#pending.delete(source);
    }
  }

  #remember(source: string, script: PreparedScript): void {
    const chars = sizeOf(source, script);
    if (chars > this.#maxChars || this.#bySource.has(source)) return;
    this.#bySource.set(source, script);
    this.#chars += chars;
    for (const [oldest, entry] of this.#bySource) {
      if (this.#chars <= this.#maxChars) break;
      this.#bySource.delete(oldest);
      this.#chars -= sizeOf(oldest, entry);
    }
  }
}

async function prepare(source: string): Promise<PreparedScript> {
  // Named after the source is fixed, so no script can declare a binding that shadows it.
  const guard = guardName();
  let guarded: string;
  try {
    guarded = guardLoops(source, guard);
  } catch (error) {
    return { ok: false, message: errorMessage(error) };
  }
  return { ok: true, hash: await contentHash(source), module: scriptModule(guarded, guard, LIMITS.LOOP_ITERATIONS_MAX) };
}

function sizeOf(source: string, script: PreparedScript): number {
  return source.length + (script.ok ? script.module.length : script.message.length);
}
