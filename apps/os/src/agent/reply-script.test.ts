import { describe, expect, test } from "vitest";
import { scriptInReply } from "./reply-script.ts";

const fence = (body: string, info = "ts") => `\`\`\`${info}\n${body}\n\`\`\``;

describe("scriptInReply", () => {
  test.each([
    ["one ts block", `Sure.\n${fence("async (itx) => 1")}`, "async (itx) => 1"],
    ["typescript info string", fence("async (itx) => { await itx.chat.sendMessage('hi'); }", "typescript"), "async (itx) => { await itx.chat.sendMessage('hi'); }"],
    ["no info string", fence("async function (itx) { return 2 }", ""), "async function (itx) { return 2 }"],
    ["a trailing semicolon", fence("async (itx) => 3;"), "async (itx) => 3;"],
    ["a non-code block beside it", `${fence("some output", "text")}\n${fence("async (itx) => 4")}`, "async (itx) => 4"],
  ])("accepts %s", (_name, reply, script) => {
    expect(scriptInReply(reply)).toEqual({ ok: true, script });
  });

  test.each([
    ["no block", "I cannot help with that.", /no fenced/],
    ["two blocks", `${fence("async (itx) => 1")}\n${fence("async (itx) => 2")}`, /2 fenced code blocks/],
    ["an empty block", fence(""), /empty/],
    ["a sync function", fence("(itx) => 1"), /one async function/],
    ["a statement", fence("const x = 1"), /did not parse/],
    ["two expressions", fence("async (itx) => 1\nasync (itx) => 2"), /more than one expression/],
    ["type annotations", fence("async (itx: Itx) => 1"), /without type annotations/],
  ])("refuses %s", (_name, reply, problem) => {
    expect(scriptInReply(reply)).toEqual({ ok: false, problem: expect.stringMatching(problem) });
  });
});
