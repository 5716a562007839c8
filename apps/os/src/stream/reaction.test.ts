import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { streamStub } from "./stream-rpc-target.ts";
import { SUBSCRIPTION_CONFIGURED } from "./stream-core.ts";
import { LOOP_LIMIT_RECORDED, reactionTo } from "./reaction.ts";
import { expectCode } from "iterate/stream/test-support";
import { LIMITS } from "../limits.ts";

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
    const within = { principal: "p", origin: "/agents/a", reaction: { began, round: LIMITS.REACTION_ROUNDS_MAX } };
    await stream.append({ events: [{ type: "test/pinged" }], stamp: within });
    const past = { ...within, reaction: { began, round: LIMITS.REACTION_ROUNDS_MAX + 1 } };
    let refused: (Error & { code?: string; details?: unknown }) | undefined;
    try {
      await stream.append({ events: [{ type: "test/pinged" }], stamp: past });
    } catch (error) {
      refused = error as Error & { code?: string };
    }
    expect(refused?.code).toBe("LOOP_LIMIT");
    expect(refused?.message).toMatch(/began at \/agents\/a#5/);
    await expectCode(stream.append({ events: [{ type: "test/pinged" }], stamp: { ...within, reaction: { began, round: LIMITS.REACTION_ROUNDS_MAX + 2 } } }), "LOOP_LIMIT");
    const events = await stream.getEvents({});
    expect(events.map((event) => event.type)).toEqual(["test/pinged", LOOP_LIMIT_RECORDED]);
    expect(events[1]?.payload).toMatchObject({ began, round: LIMITS.REACTION_ROUNDS_MAX + 1, limit: LIMITS.REACTION_ROUNDS_MAX });
    expect(events[0]?.source.reaction).toEqual({ began, round: LIMITS.REACTION_ROUNDS_MAX });
    // Writes outside the chain go on.
    await stream.append({ events: [{ type: "test/pinged" }], stamp: { principal: "p", origin: "/" } });
    expect(await stream.head()).toBe(3);
  });

  test("a processor appending what it handles is stopped after a few rounds, with one fact, and moves on", async () => {
    const coordinate = `prj_echo${Date.now()}:/echoes`;
    const stream = streamStub(env.STREAM, coordinate);
    await stream.append({
      events: [
        { type: SUBSCRIPTION_CONFIGURED, payload: { key: "echo", subscription: { type: "processor", binding: "ECHO_PROCESSORS", host: coordinate, processor: "echo" } } },
        { type: "test/echo-sent", payload: { n: 0 } },
      ],
      stamp: { principal: "p", origin: "/", platform: "context" },
    });
    await expect.poll(async () => (await stream.getEvents({ types: [LOOP_LIMIT_RECORDED] })).length, { timeout: 10_000 }).toBe(1);
    const host = env.ECHO_PROCESSORS.getByName(coordinate) as unknown as { snapshot(): Promise<{ offset: number }> };
    await expect.poll(async () => (await host.snapshot()).offset, { timeout: 5_000 }).toBe(await stream.head());
    const echoes = await stream.getEvents({ types: ["test/echo-sent"] });
    expect(echoes.map((event) => [event.payload, event.source.reaction?.round ?? 0])).toEqual(
      Array.from({ length: LIMITS.REACTION_ROUNDS_MAX + 1 }, (_, round) => [{ n: round }, round]),
    );
    const [fact] = await stream.getEvents({ types: [LOOP_LIMIT_RECORDED] });
    expect(fact?.payload).toMatchObject({ began: "/echoes#2", round: LIMITS.REACTION_ROUNDS_MAX + 1 });
    // Quiet afterwards: nothing retries the refused write.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await stream.head()).toBe(LIMITS.REACTION_ROUNDS_MAX + 3);
  });

  test("a writer cannot set a reaction in its own source", async () => {
    const stream = streamStub(env.STREAM, `prj_reaction${Date.now()}:/x`);
    const forged = { type: "test/pinged", source: { reaction: { began: "x#1", round: 0 } } } as unknown as { type: string };
    await expectCode(stream.append({ events: [forged], stamp: { principal: "p" } }), "INVALID_ARGUMENT");
  });
});
