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
//
// What the script throws is answered as a value (`thrown`: its message and code, as strings),
// not thrown across the call: an exception thrown out of an RPC method is printed by workerd with
// its stack, so every failing script was a line in the platform's log. Reading the thrown value
// may run the script's own code (a getter, a toString): that happens here, in its isolate, under
// its own limits, and whatever it does the answer holds only strings.
export function scriptModule(source: string, guard: string, maxIterations: number): string {
  return `import { WorkerEntrypoint } from "cloudflare:workers";
let iterations = 0; const ${guard} = () => { if (++iterations > ${maxIterations}) throw new Error("the script made more than ${maxIterations} loop iterations (LOOP_ITERATIONS_MAX)"); };
const evaluate = async () => (
${source}
);
let evaluated;
const describeThrown = (error) => {
  let message = "the script threw a value that has no message";
  let code;
  try {
    const raw = error !== null && typeof error === "object" && "message" in error ? error.message : error;
    message = typeof raw === "string" ? raw : String(raw);
  } catch {}
  try {
    if (error !== null && typeof error === "object" && typeof error.code === "string") code = error.code;
  } catch {}
  return code === undefined ? { message } : { message, code };
};
const answer = async (itx) => {
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
};
export default class extends WorkerEntrypoint {
  ready() {
    return true;
  }
  async run(itx) {
    try {
      return await answer(itx);
    } catch (error) {
      return { thrown: describeThrown(error) };
    }
  }
}
`;
}

/** Lines the module adds before the script's first line (for error positions). */
export const SCRIPT_LINE_OFFSET = 3;
