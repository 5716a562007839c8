/**
 * `iterate/cli`: what scripts that run the `iterate` CLI branch on. The CLI itself is the package's
 * bin (`iterate --help`); docs/cli.md documents its commands.
 *
 * @example
 * import { EXIT_CODES } from "iterate/cli";
 * const { status } = spawnSync("iterate", ["call", "/tools/x"]);
 * if (status === EXIT_CODES.NOT_FOUND) console.log("no such capability");
 * @module
 */
export { EXIT_CODES, EXIT_OK, EXIT_UNCODED, EXIT_USAGE } from "./exit-codes.ts";
export { DEFAULT_BASE_URL, LOCAL_DEFAULT_ADMIN_SECRET } from "./target.ts";
