import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { documentationBlocks, type CodeBlock } from "../../packages/iterate/scripts/docs-code-blocks.ts";

const E2E_DIR = resolve(import.meta.dirname, "..");
const REPO_ROOT = resolve(E2E_DIR, "..");

/**
 * The Node the docs promise (22, from the root's optional dependency): the system Node may be
 * older, and vitest itself may run on it when started with npx.
 */
const NODE = [join(REPO_ROOT, "node_modules", ".bin", "node")].find((path) => existsSync(path)) ?? process.execPath;

/** The blocks of README.md and docs/ flagged `run`: self-contained scripts the docs-code suite runs. */
export function runnableBlocks(): CodeBlock[] {
  return documentationBlocks(REPO_ROOT).filter((block) => block.flags.includes("run"));
}

/** How a block is named in test titles and tables: its file and first code line. */
export const blockName = (block: CodeBlock) => `${block.file}: ${block.code.split("\n")[0]}`;

/**
 * What a block's prose sets up for it, from the environment a user would set: `baseUrl`, `auth`
 * and `projectId`, `itx` (a handle on that project's root context) and `session` (an admin
 * session, as README's first script opens it), each opened only when the block uses it and
 * disposed after it. A block that declares its own names shadows these.
 */
const PRELUDE = `import { connectItx } from "iterate/client";

globalThis.baseUrl = process.env.ITERATE_BASE_URL;
globalThis.auth = { type: "admin-secret", secret: process.env.ITERATE_ADMIN_SECRET };
globalThis.projectId = process.env.ITERATE_PROJECT_ID;
const opened = [];
const lazily = (name, open) => {
  let handle;
  Object.defineProperty(globalThis, name, { configurable: true, get: () => (handle ??= opened[opened.push(open()) - 1]) });
};
lazily("itx", () => connectItx({ baseUrl: globalThis.baseUrl, auth: globalThis.auth, projectId: globalThis.projectId }));
lazily("session", () => connectItx({ baseUrl: globalThis.baseUrl, auth: globalThis.auth }));
try {
  await import(process.argv[2]);
} finally {
  for (const handle of opened) handle[Symbol.dispose]();
}
`;

export interface BlockRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A folder inside e2e/ (so `iterate/client` resolves as README's first script says) for the blocks' files. */
export function blockRunner(): { run(block: CodeBlock, env: Record<string, string>): Promise<BlockRun>; remove(): void } {
  const dir = mkdtempSync(join(E2E_DIR, ".docs-code-run-"));
  const prelude = join(dir, "prelude.mjs");
  writeFileSync(prelude, PRELUDE);
  let count = 0;
  return {
    run(block, env) {
      // A TypeScript block runs with Node's type stripping (no `using` on Node 22: keep those JavaScript-free of it).
      const file = join(dir, `block-${++count}.${block.lang === "js" ? "mjs" : "mts"}`);
      writeFileSync(file, `${block.code}\n`);
      return new Promise((resolvePromise) => {
        execFile(NODE, [prelude, file], { cwd: dir, env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
          resolvePromise({ code, stdout, stderr });
        });
      });
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
