import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { ITX_TYPES } from "../src/sdk/itx-types.generated.ts";
import { ITX_TYPES_PATH, declarationsOf, reachableFrom, readContract, renderItxTypes } from "./generate-itx-types.ts";

describe("the types an itx answers in __describe()", () => {
  test("the generated copy matches types.ts (else run `pnpm --filter iterate generate`)", () => {
    expect(readFileSync(ITX_TYPES_PATH, "utf8")).toBe(renderItxTypes(readContract()));
  });

  test("they hold the Itx interface and what it reaches, not the rest of the contract", () => {
    expect(ITX_TYPES).toMatch(/^export interface Itx \{$/m);
    expect(ITX_TYPES).toMatch(/^export interface Stream \{$/m);
    expect(ITX_TYPES).toMatch(/^export interface Agents \{$/m);
    expect(ITX_TYPES).not.toMatch(/interface Session\b/);
    expect(ITX_TYPES).not.toMatch(/type Credentials\b/);
  });

  test("a declaration is cut with its JSDoc and ends where it closes", () => {
    const source = [
      "/** A. */",
      "export interface A {",
      "  /** its b */",
      "  b: B;",
      "}",
      "",
      "export type B =",
      '  | "x"',
      '  | "y";',
      "",
      "// ---",
      "export type Unused = string;",
    ].join("\n");
    const declarations = declarationsOf(source);
    expect(declarations.map((declaration) => declaration.name)).toEqual(["A", "B", "Unused"]);
    expect(declarations[0]?.text).toBe("/** A. */\nexport interface A {\n  /** its b */\n  b: B;\n}");
    expect(declarations[0]?.code).toBe("export interface A {\n  b: B;\n}");
    expect(declarations[1]?.text).toBe('export type B =\n  | "x"\n  | "y";');
    expect(reachableFrom(declarations, "A").map((declaration) => declaration.name)).toEqual(["A", "B"]);
  });
});
