// Node-only: the fenced TypeScript and JavaScript blocks of the repository's Markdown (README.md,
// docs/**), for the test that type-checks them against this package (docs-code-blocks.test.ts)
// and the e2e suite that runs the ones flagged `run` (e2e/suites/docs-code.test.ts).
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";

/** One fenced ```ts / ```typescript / ```tsx / ```js / ```javascript / ```mjs block. */
export interface CodeBlock {
  /** The Markdown file, relative to the repository root. */
  file: string;
  /** The 1-based line of the block's first code line (the line after the opening fence). */
  line: number;
  lang: "ts" | "tsx" | "js";
  /** Words after the language in the info string: `no-check` (not type-checked), `run` (a self-contained script the e2e suite runs). */
  flags: string[];
  code: string;
}

const FENCE = /^([ \t]*)```(ts|typescript|tsx|js|javascript|mjs)(?:[ \t]+([^\n]*))?$/;
const LANGS: Record<string, CodeBlock["lang"]> = { ts: "ts", typescript: "ts", tsx: "tsx", js: "js", javascript: "js", mjs: "js" };

/** The TypeScript and JavaScript blocks of one Markdown text, in order. Other languages and unclosed fences are skipped. */
export function extractCodeBlocks(markdown: string, file: string): CodeBlock[] {
  const lines = markdown.split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? "");
    if (!open) continue;
    const indent = open[1] ?? "";
    const end = lines.findIndex((text, j) => j > i && text.trimEnd() === `${indent}\`\`\``);
    if (end === -1) break;
    blocks.push({
      file,
      line: i + 2,
      lang: LANGS[open[2] ?? ""] ?? "ts",
      flags: (open[3] ?? "").split(/\s+/).filter(Boolean),
      code: lines
        .slice(i + 1, end)
        .map((text) => (text.startsWith(indent) ? text.slice(indent.length) : text))
        .join("\n"),
    });
    i = end;
  }
  return blocks;
}

/**
 * The source file a block quotes, when its first line is a comment naming a file of the
 * repository (`// packages/iterate/src/.../contract.ts`): such an excerpt is checked against
 * that file, which its own package type-checks, instead of on its own.
 */
export function excerptOf(block: CodeBlock, repoRoot: string): { path: string; body: string } | undefined {
  const [first, ...rest] = block.code.split("\n");
  const named = /^\/\/ ([\w./-]+\.tsx?)$/.exec(first?.trim() ?? "");
  if (!named?.[1] || !existsSync(join(repoRoot, named[1]))) return undefined;
  return { path: named[1], body: rest.join("\n") };
}

/** README.md and every Markdown file under docs/, relative to `repoRoot`, sorted. */
export function documentationFiles(repoRoot: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return walk(path);
      return entry.name.endsWith(".md") ? [relative(repoRoot, path)] : [];
    });
  return ["README.md", ...walk(join(repoRoot, "docs"))].filter((file) => existsSync(join(repoRoot, file))).toSorted();
}

/** Every TypeScript and JavaScript block of the repository's documentation. */
export function documentationBlocks(repoRoot: string): CodeBlock[] {
  return documentationFiles(repoRoot).flatMap((file) => extractCodeBlocks(readFileSync(join(repoRoot, file), "utf8"), file));
}
