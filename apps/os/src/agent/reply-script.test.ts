import { describe, expect, test } from "vitest";
import { scriptInReply } from "./reply-script.ts";

const fence = (body: string, info = "ts", marker = "```") => `${marker}${info}\n${body}\n${marker}`;

describe("scriptInReply", () => {
  test.each([
    ["one ts block", `Sure.\n${fence("async (itx) => 1")}`, "async (itx) => 1"],
    ["typescript info string", fence("async (itx) => { await itx.chat.sendMessage('hi'); }", "typescript"), "async (itx) => { await itx.chat.sendMessage('hi'); }"],
    ["no info string", fence("async function (itx) { return 2 }", ""), "async function (itx) { return 2 }"],
    ["a trailing semicolon", fence("async (itx) => 3;"), "async (itx) => 3;"],
    ["a non-code block beside it", `${fence("some output", "text")}\n${fence("async (itx) => 4")}`, "async (itx) => 4"],
    ["CRLF line ends", "Sure.\r\n```ts\r\nasync (itx) => 5\r\n```\r\n", "async (itx) => 5"],
    ["a ~~~ block after a ``` fence that never closes", `\`\`\`ts\nnot closed\n${fence("async (itx) => 6", "ts", "~~~")}`, "async (itx) => 6"],
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

  // A regular expression with nested repetition took seconds on these (up to REPLY_MAX_LENGTH
  // each), on the agent's thread. workerd may hold its clock still while code runs, so the clock is
  // read again after a timer; the loose bound fails on work of seconds, not on a busy machine.
  test("hostile replies are answered at once: a fence line of blanks, thousands of fences that never close", async () => {
    const blanks = `\`\`\`${" ".repeat(250)}x\n`.repeat(250);
    const unclosed = "```a\n".repeat(12_800);
    const began = Date.now();
    expect(scriptInReply(blanks)).toEqual({ ok: false, problem: expect.stringMatching(/no fenced/) });
    expect(scriptInReply(unclosed)).toEqual({ ok: false, problem: expect.stringMatching(/no fenced/) });
    expect(scriptInReply(`${blanks}${fence("async (itx) => 7", "ts", "~~~")}`)).toEqual({ ok: true, script: "async (itx) => 7" });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(Date.now() - began).toBeLessThan(1_000);
  });
});
