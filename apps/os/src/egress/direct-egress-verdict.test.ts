import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { KeptVerdict, SHADOW_FREE_KEPT_MAX, knownShadowFree, noteShadowFree, revocationFloor, revokeDirectEgress, stillValid } from "./direct-egress-verdict.ts";

// A local OS's env as far as these functions look: a runner is bound. Revocations go through the
// real env (no runner here), which raises the floor and has no runner to tell.
const local = { ...env, RUNNER: {} } as unknown as Env;
const key = (name: string) => JSON.stringify(["prj_verdict", `/${name}-${crypto.randomUUID()}`]);

describe("knownShadowFree", () => {
  test("keeps a shadow-free answer until the floor rises", async () => {
    const where = key("kept");
    expect(knownShadowFree(local, where)).toBe(false);
    noteShadowFree(local, where, revocationFloor(), false);
    expect(knownShadowFree(local, where)).toBe(true);
    await revokeDirectEgress(env);
    expect(knownShadowFree(local, where)).toBe(false);
  });

  test("keeps nothing for a shadowed chain, an answer asked before a provide landed, or without a runner", async () => {
    const shadowed = key("shadowed");
    noteShadowFree(local, shadowed, revocationFloor(), true);
    expect(knownShadowFree(local, shadowed)).toBe(false);
    const raced = key("raced");
    const askedAt = revocationFloor();
    await revokeDirectEgress(env);
    noteShadowFree(local, raced, askedAt, false);
    expect(knownShadowFree(local, raced)).toBe(false);
    const deployed = key("deployed");
    noteShadowFree(env, deployed, revocationFloor(), false);
    expect(knownShadowFree(env, deployed)).toBe(false);
    // A shadowed answer forgets what was kept.
    const forgotten = key("forgotten");
    noteShadowFree(local, forgotten, revocationFloor(), false);
    noteShadowFree(local, forgotten, revocationFloor(), true);
    expect(knownShadowFree(local, forgotten)).toBe(false);
  });

  test(`remembers at most SHADOW_FREE_KEPT_MAX (${SHADOW_FREE_KEPT_MAX}) contexts, forgetting the oldest`, () => {
    const first = key("first");
    noteShadowFree(local, first, revocationFloor(), false);
    for (let index = 0; index < SHADOW_FREE_KEPT_MAX; index++) noteShadowFree(local, key(`filler${index}`), revocationFloor(), false);
    expect(knownShadowFree(local, first)).toBe(false);
  });
});

describe("KeptVerdict", () => {
  test("asks once per floor, and a verdict made before a revocation is never sent", async () => {
    let asked = 0;
    const kept = new KeptVerdict(async () => {
      asked++;
      return { epoch: revocationFloor(), policy: "" };
    });
    const first = await kept.current();
    expect(await kept.current()).toBe(first);
    expect(asked).toBe(1);
    expect(stillValid(first)).toEqual(first);
    await revokeDirectEgress(env);
    expect(stillValid(first)).toBeUndefined();
    const second = await kept.current();
    expect(asked).toBe(2);
    expect(stillValid(second)).toEqual(second);
  });
});
