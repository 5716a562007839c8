// The module a script runs in. The script's source is placed inside parentheses, so it must be one
// expression: an `async (itx) => { ... }` function, called with the itx that `run` is handed.
// Results leave as JSON text, so a value that JSON cannot hold fails here, inside the isolate,
// with a clear message.
//
// Loading the module runs none of the script: its expression is evaluated by the first `run` (and
// kept for later runs in the same isolate, as a module-level value would be). So the isolate can be
// loaded before the run's request is durable (`ready`), and the script still starts only after it.
// The arrow at module level keeps what the expression sees as it was at the top of the module:
// `this` is undefined, there is no `arguments`, and `await` is allowed.
export function scriptModule(source: string, guard: string, maxIterations: number): string {
  return `import { WorkerEntrypoint } from "cloudflare:workers";
let iterations = 0; const ${guard} = () => { if (++iterations > ${maxIterations}) throw new Error("the script made more than ${maxIterations} loop iterations (LOOP_ITERATIONS_MAX)"); };
const evaluate = async () => (
${source}
);
let evaluated;
export default class extends WorkerEntrypoint {
  ready() {
    return true;
  }
  async run(itx) {
    evaluated ??= evaluate();
    const script = await evaluated;
    if (typeof script !== "function") throw new Error("a script is one function: async (itx) => { ... }");
    const value = await script(itx);
    if (value === undefined) return { undefined: true };
    let json;
    try {
      json = JSON.stringify(value);
    } catch (error) {
      throw new Error("the script's result is not JSON: " + (error && error.message));
    }
    if (json === undefined) throw new Error("the script's result is not JSON: a " + typeof value + " has no JSON form");
    return { json };
  }
}
`;
}

/** Lines the module adds before the script's first line (for error positions). */
export const SCRIPT_LINE_OFFSET = 3;
