// The documentation's code compiles: every ```ts / ```typescript / ```tsx block of README.md and
// docs/**/*.md is type-checked (strict, the repository's settings) against this package as its
// users import it (`iterate/client`, `iterate/worker`, ...), and so is every ```js / ```javascript
// / ```mjs block (checkJs: the types a TypeScript user would get, inferred from the same imports). A block that quotes a file
// (first line `// path/to/file.ts`) must match that file, which its package type-checks.
// A block may opt out with the info string ```ts no-check; NO_CHECK lists every one. A block
// flagged ```js run is a self-contained script that e2e/suites/docs-code.test.ts also runs
// against a local OS (docs/architecture.md, "Tests", says how to write one).
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { documentationBlocks, excerptOf, extractCodeBlocks, type CodeBlock } from "./docs-code-blocks.ts";

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const REPO_ROOT = resolve(PACKAGE_DIR, "..", "..");
// Inside the package, so `iterate/...` resolves to this package's own exports (a self-reference)
// and its dependencies (react, capnweb) resolve as they do for the package.
const WORK_DIR = join(PACKAGE_DIR, ".docs-code-check");

/**
 * Blocks deliberately left unchecked (```ts no-check), by file and first code line, with why.
 * A call on a name the contract cannot know (a capability provided at run time, a loaded worker's
 * method, an MCP tool, an API operation) is no reason: the block types it with `mounted<M>()` or
 * `connectItx<M>()` (decision 0023).
 */
const NO_CHECK: Record<string, string> = {
  "docs/streams-and-processors.md: const engine = new ProcessorEngine({ stream, storage, processors: [new Counter()], clock, limits, onSkip });": "names the engine's options; the counter example's tests build one in full",
};

// Names a snippet may use without declaring them: what the surrounding prose has set up.
// The functions and values below them stand for the reader's own code in illustrations.
const SNIPPET_GLOBALS = `import type { Handle } from "iterate/client";
import type { Credentials, Itx, Repo, Session } from "iterate/types";
declare global {
  /** A context handle, as \`connectItx({ baseUrl, auth, projectId })\` answers it. */
  const itx: Handle<Itx>;
  /** An admin session, as README's first script opens it. */
  const session: Handle<Session>;
  /** The repository docs/repos.md's first script creates. */
  const site: Handle<Repo>;
  const baseUrl: string;
  const auth: Credentials;
  const projectId: string;
  const token: string;
  const files: Record<string, string>;
  const bytes: Uint8Array;
  const untrustedScript: string;
  const approvalGate: (...args: unknown[]) => unknown;
  const x: unknown;
  function runSwift(source: string): Promise<string>;
  function search(query: string): Promise<string[]>;
}
export {};
`;

const blocks = documentationBlocks(REPO_ROOT);
const key = (block: CodeBlock) => `${block.file}:${block.line}`;
/** How NO_CHECK names a block: its file and first code line. */
const named = (block: CodeBlock) => `${block.file}: ${block.code.split("\n")[0]}`;
/** Verbatim but for indentation: a quote may lift a test out of its describe(). */
const unindented = (text: string) => text.replace(/^[ \t]+/gm, "");
/** Code for workerd (a project's worker, dynamic workers) compiles with the Workers types; the rest (clients, processors, React) with Node's and the DOM's. */
const forWorkers = (block: CodeBlock) => /from "iterate\/(sdk|worker)"/.test(block.code);
const flagged = blocks.filter((block) => block.flags.includes("no-check"));
const excerpts = blocks.flatMap((block) => {
  const excerpt = flagged.includes(block) ? undefined : excerptOf(block, REPO_ROOT);
  return excerpt ? [{ block, ...excerpt }] : [];
});
const checked = blocks.filter((block) => !flagged.includes(block) && !excerpts.some((excerpt) => excerpt.block === block));

afterAll(() => rmSync(WORK_DIR, { recursive: true, force: true }));

describe("the documentation's TypeScript and JavaScript", () => {
  it("finds blocks in README.md and docs/", () => {
    expect(checked.filter((block) => block.lang !== "js").length).toBeGreaterThan(5);
    expect(checked.filter((block) => block.lang === "js").length).toBeGreaterThan(5);
    expect(excerpts.length).toBeGreaterThan(0);
  });

  it("marks no block no-check except the listed ones", () => {
    expect(Object.fromEntries(flagged.map((block) => [named(block), NO_CHECK[named(block)] ?? "(not listed)"]))).toEqual(NO_CHECK);
  });

  it.each(excerpts.map((excerpt) => [key(excerpt.block), excerpt] as const))("%s quotes its file verbatim", (_key, excerpt) => {
    expect(unindented(readFileSync(join(REPO_ROOT, excerpt.path), "utf8"))).toContain(unindented(excerpt.body));
  });

  it("type-checks every other block against the iterate package", { timeout: 60_000 }, () => {
    const errors = [
      ...typeCheck("node", checked.filter((block) => !forWorkers(block) && block.lang !== "js"), { lib: ["es2024", "dom", "esnext.disposable"], types: ["node"], jsx: "react-jsx" }),
      // checkJs holds the JavaScript blocks to the same strict settings: an unknown member or a
      // wrong argument is an error there as in TypeScript. Only an unannotated parameter may be
      // implicitly any, since JavaScript cannot annotate it.
      ...typeCheck("node-js", checked.filter((block) => block.lang === "js"), { lib: ["es2024", "dom", "esnext.disposable"], types: ["node"], allowJs: true, checkJs: true, noImplicitAny: false }),
      ...typeCheck("workers", checked.filter(forWorkers), { lib: ["es2024", "esnext.disposable"], types: ["@cloudflare/workers-types"] }),
    ];
    expect(errors).toEqual([]);
  });
});

describe("extractCodeBlocks", () => {
  it("takes ts, typescript, tsx, js, javascript and mjs blocks with their line and flags, and nothing else", () => {
    const markdown = [
      "# t", "```ts", "const a = 1;", "```", "```jsonc", "{}", "```", "```js run", "x", "```", "  ```typescript no-check", "  b;", "  ```",
      "```sh", "ls", "```", "```mjs", "m", "```", "```tsx", "<a/>",
    ].join("\n");
    expect(extractCodeBlocks(markdown, "x.md")).toEqual([
      { file: "x.md", line: 3, lang: "ts", flags: [], code: "const a = 1;" },
      { file: "x.md", line: 9, lang: "js", flags: ["run"], code: "x" },
      { file: "x.md", line: 12, lang: "ts", flags: ["no-check"], code: "b;" },
      { file: "x.md", line: 18, lang: "js", flags: [], code: "m" },
    ]);
  });
});

/** Writes `program` as modules of one program and answers tsc's errors as `<doc file>:<line>: <message>`. */
function typeCheck(name: string, program: CodeBlock[], options: { lib: string[]; types: string[]; jsx?: string; allowJs?: boolean; checkJs?: boolean; noImplicitAny?: boolean }): string[] {
  if (program.length === 0) return [];
  const dir = join(WORK_DIR, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const origin = new Map<string, CodeBlock>();
  for (const block of program) {
    const fileName = `${block.file.replace(/[^\w]/g, "_")}_L${block.line}.${block.lang}`;
    origin.set(fileName, block);
    writeFileSync(join(dir, fileName), `${block.code}\n`);
  }
  writeFileSync(join(dir, "snippet-globals.d.ts"), SNIPPET_GLOBALS);
  const compilerOptions = { ...options, moduleDetection: "force", noEmit: true };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ extends: join(REPO_ROOT, "tsconfig.base.json"), compilerOptions, include: ["*.ts", "*.tsx", "*.js"] }));
  const tsc = join(dirname(createRequire(join(PACKAGE_DIR, "package.json")).resolve("typescript/package.json")), "bin", "tsc");
  let output = "";
  try {
    execFileSync(process.execPath, [tsc, "-p", dir, "--pretty", "false"], { encoding: "utf8", stdio: "pipe" });
  } catch (error) {
    output = String((error as { stdout?: string }).stdout ?? error);
  }
  return output
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const at = /^(.+?)\((\d+),\d+\): (.*)$/.exec(line);
      const block = at ? origin.get(at[1]?.split(/[\\/]/).at(-1) ?? "") : undefined;
      return block && at ? `${block.file}:${block.line + Number(at[2]) - 1}: ${at[3]}` : line;
    });
}
