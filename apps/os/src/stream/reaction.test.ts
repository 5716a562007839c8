import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { codeOf } from "../../test/error-code.ts";
import { streamStub } from "./stream-capability.ts";
import { LOOP_LIMIT_RECORDED, REACTION_ROUNDS_MAX, reactionTo } from "./reaction.ts";

describe("reaction chains", () => {
  test("reacting to an event moves one round along its chain, which began at the first event", () => {
    const first = { streamPath: "/agents/a", offset: 7, source: {} };
    const second = { streamPath: "/agents/b", offset: 3, source: { reaction: reactionTo(first) } };
    expect(reactionTo(first)).toEqual({ began: "/agents/a#7", round: 1 });
    expect(reactionTo(second)).toEqual({ began: "/agents/a#7", round: 2 });
  });

  test("a write past REACTION_ROUNDS_MAX is refused with LOOP_LIMIT, recorded once, and reading still works", async () => {
    const stream = streamStub(env.STREAM, `prj_reaction${Date.now()}:/agents/b`);
    const began = "/agents/a#5";
    const within = { principal: "p", origin: "/agents/a", reaction: { began, round: REACTION_ROUNDS_MAX } };
    await stream.append({ events: [{ type: "test/pinged" }], stamp: within });
    const past = { ...within, reaction: { began, round: REACTION_ROUNDS_MAX + 1 } };
    let refused: (Error & { code?: string; details?: unknown }) | undefined;
    try {
      await stream.append({ events: [{ type: "test/pinged" }], stamp: past });
    } catch (error) {
      refused = error as Error & { code?: string };
    }
    expect(refused?.code).toBe("LOOP_LIMIT");
    expect(refused?.message).toMatch(/began at \/agents\/a#5/);
    expect(await codeOf(stream.append({ events: [{ type: "test/pinged" }], stamp: { ...within, reaction: { began, round: REACTION_ROUNDS_MAX + 2 } } }))).toBe("LOOP_LIMIT");
    const events = await stream.getEvents({});
    expect(events.map((event) => event.type)).toEqual(["test/pinged", LOOP_LIMIT_RECORDED]);
    expect(events[1]?.payload).toMatchObject({ began, round: REACTION_ROUNDS_MAX + 1, limit: REACTION_ROUNDS_MAX });
    expect(events[0]?.source.reaction).toEqual({ began, round: REACTION_ROUNDS_MAX });
    // Writes outside the chain go on.
    await stream.append({ events: [{ type: "test/pinged" }], stamp: { principal: "p", origin: "/" } });
    expect(await stream.head()).toBe(3);
  });

  test("a writer cannot set a reaction in its own source", async () => {
    const stream = streamStub(env.STREAM, `prj_reaction${Date.now()}:/x`);
    const forged = { type: "test/pinged", source: { reaction: { began: "x#1", round: 0 } } } as unknown as { type: string };
    expect(await codeOf(stream.append({ events: [forged], stamp: { principal: "p" } }))).toBe("INVALID_ARGUMENT");
  });
});
