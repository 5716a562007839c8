import { describe, expect, test } from "vitest";
import { FrameSender } from "./frame-sender.ts";

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("FrameSender", () => {
  test("sends batched frames in order, then hands back the unsent rest with the next index", async () => {
    const sent: Array<[string, number]> = [];
    const frames = new FrameSender(async (delta, index) => void sent.push([delta, index]), 5);
    frames.push("a");
    frames.push("b");
    await wait(30);
    frames.push("c");
    expect(await frames.takeRest()).toEqual({ delta: "c", index: 1 });
    expect(sent).toEqual([["ab", 0]]);
    frames.push("late");
    await frames.close();
    await wait(20);
    expect(sent).toEqual([["ab", 0]]);
  });

  test("answers no rest when everything went out, and close sends what is left", async () => {
    const sent: Array<[string, number]> = [];
    const idle = new FrameSender(async (delta, index) => void sent.push([delta, index]), 5);
    idle.push("x");
    await wait(30);
    expect(await idle.takeRest()).toBeUndefined();
    const closing = new FrameSender(async (delta, index) => void sent.push([delta, index]), 1_000);
    closing.push("y");
    await closing.close();
    expect(sent).toEqual([["x", 0], ["y", 0]]);
  });

  test("the rest waits for an earlier frame still being sent, so frames never overtake", async () => {
    const order: string[] = [];
    const { promise: slow, resolve: release } = Promise.withResolvers<void>();
    const frames = new FrameSender(async (delta) => {
      await slow;
      order.push(`sent ${delta}`);
    }, 1);
    frames.push("first");
    await wait(20);
    frames.push("second");
    const rest = frames.takeRest().then((value) => order.push(`rest ${value?.delta}`));
    await wait(10);
    expect(order).toEqual([]);
    release();
    await rest;
    expect(order).toEqual(["sent first", "rest second"]);
  });
});
