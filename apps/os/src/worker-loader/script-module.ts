// The module a script runs in. The script's source is placed inside parentheses, so it must be one
// expression: an `async (itx) => { ... }` function, called with the itx that `run` is handed.
// Results leave as JSON text, so a value that JSON cannot hold fails here, inside the isolate,
// with a clear message.
export function scriptModule(source: string, guard: string, maxIterations: number): string {
  return `import { WorkerEntrypoint } from "cloudflare:workers";
let iterations = 0; const ${guard} = () => { if (++iterations > ${maxIterations}) throw new Error("the script made more than ${maxIterations} loop iterations (LOOP_ITERATIONS_MAX)"); };
const script = (
${source}
);
export default class extends WorkerEntrypoint {
  async run(itx) {
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
