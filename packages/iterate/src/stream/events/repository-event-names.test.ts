import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { checkPlatformEventName } from "./event-type.ts";

// Every platform event type spelled anywhere in the repository follows the naming rules, tests
// included. A test that feeds a bad name on purpose marks its line with `invalid on purpose`.
const REPO = resolve(import.meta.dirname, "..", "..", "..", "..", "..");
const ROOTS = ["apps", "packages", "e2e", "bench", "configs"];
const SKIP = new Set(["node_modules", "dist", ".wrangler", ".dev-state"]);
// The rules' own module spells bad names in its messages and examples.
const RULES_MODULE = "packages/iterate/src/stream/events/event-type.ts";
const LITERAL = /["'`](events\.iterate\.com\/[^"'`\s]+)["'`]/g;

function* sourceFiles(dir: string): Generator<string> {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of entries) {
    if (SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(name)) yield path;
  }
}

function platformTypesInRepository(): Array<{ where: string; type: string }> {
  const found: Array<{ where: string; type: string }> = [];
  for (const root of ROOTS) {
    for (const file of sourceFiles(join(REPO, root))) {
      if (relative(REPO, file) === RULES_MODULE) continue;
      const lines = readFileSync(file, "utf8").split("\n");
      lines.forEach((line, index) => {
        if (line.includes("invalid on purpose")) return;
        for (const match of line.matchAll(LITERAL)) {
          found.push({ where: `${relative(REPO, file)}:${index + 1}`, type: match[1] as string });
        }
      });
    }
  }
  return found;
}

describe("event names across the repository", () => {
  const types = platformTypesInRepository();

  it("finds the platform's own event types (the scan is looking in the right place)", () => {
    expect(types.map((entry) => entry.type)).toContain("events.iterate.com/itx/subscription-configured");
  });

  it("every events.iterate.com/ type follows the naming rules", () => {
    const problems = types.flatMap(({ where, type }) => checkPlatformEventName(type).map((problem) => `${where} ${type}: ${problem}`));
    expect(problems).toEqual([]);
  });
});
