import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, test } from "vitest";
import { LIMITS } from "../limits.ts";
import { ArtifactStore, artifactCharsInMemory } from "./artifact-store.ts";

const artifact = (hash: string, chars: number) => ({ hash, mainModule: "main.js", modules: { "main.js": "x".repeat(chars) } });

describe("the project's artifact store", () => {
  test("an artifact too big for a row (PROJECT_ARTIFACT_MAX_CHARS, in UTF-8 bytes) is kept in parts, and in memory: a restart reads it back, never builds it again", async () => {
    const stub = env.STREAM.getByName(`prj_artifacts${Date.now()}:/`);
    await runInDurableObject(stub, (_instance, state) => {
      const store = new ArtifactStore(state.storage.sql);
      const small = artifact("small", 10);
      const large = artifact("large", LIMITS.PROJECT_ARTIFACT_MAX_CHARS);
      store.put(small);
      store.put(large);
      expect(store.get("small")).toEqual(small);
      expect(store.get("large")).toEqual(large);
      const larger = artifact("larger", LIMITS.PROJECT_ARTIFACT_MAX_CHARS + 1);
      store.put(larger);
      expect(store.get("larger")).toEqual(larger);
      // Fewer characters than the limit, but three or four bytes of UTF-8 each (a row would refuse
      // it), with surrogate pairs across every part's end.
      const wide = { hash: "wide", mainModule: "main.js", modules: { "main.js": `é${"😀".repeat(400_000)}€`.repeat(2) } };
      expect(JSON.stringify(wide).length).toBeLessThan(LIMITS.PROJECT_ARTIFACT_MAX_CHARS);
      store.put(wide);
      const restarted = new ArtifactStore(state.storage.sql);
      expect(restarted.get("small")).toEqual(small);
      expect(restarted.get("large")).toEqual(large);
      expect(restarted.get("larger")).toEqual(larger);
      expect(restarted.get("wide")).toEqual(wide);
      expect(restarted.get("missing")).toBeUndefined();
    });
  });

  test("PROJECT_ARTIFACTS_IN_MEMORY_MAX_CHARS: every project's large artifacts together stay within the isolate's bound; the least recently used is let go first", async () => {
    const limits = LIMITS as Record<string, number>;
    const saved = { ...limits };
    const chars = LIMITS.PROJECT_ARTIFACT_MAX_CHARS + 1;
    // Room for two large artifacts (each a little longer as JSON than its module).
    Object.assign(limits, { PROJECT_ARTIFACTS_IN_MEMORY_MAX_CHARS: 2 * chars + 1_000 });
    try {
      const before = artifactCharsInMemory();
      // Each project's store lives in its own object: it is used there (its SQLite is that object's).
      const objects = ["a", "b", "c"].map((name) => env.STREAM.getByName(`prj_artifacts_${name}${Date.now()}:/`));
      const stores = new Map<number, ArtifactStore>();
      const inProject = <T>(i: number, work: (store: ArtifactStore) => T): Promise<T> =>
        runInDurableObject(objects[i] as DurableObjectStub, (_instance, state) => {
          const store = stores.get(i) ?? new ArtifactStore(state.storage.sql);
          stores.set(i, store);
          return work(store);
        });
      await inProject(0, (a) => a.put(artifact("a1", chars)));
      await inProject(1, (b) => b.put(artifact("b1", chars)));
      // a is used again: b is now the least recently used.
      expect(await inProject(0, (a) => a.get("a1")?.hash)).toBe("a1");
      await inProject(2, (c) => c.put(artifact("c1", chars)));
      expect(artifactCharsInMemory() - before).toBeLessThanOrEqual(2 * chars + 1_000);
      // b's was let go from memory, not lost: it is read back from its parts (and held again, in
      // place of the least recently used, a's).
      expect(await inProject(1, (b) => b.get("b1")?.hash)).toBe("b1");
      expect(artifactCharsInMemory() - before).toBeLessThanOrEqual(2 * chars + 1_000);
      expect(await inProject(0, (a) => a.get("a1")?.hash)).toBe("a1");
      expect(await inProject(2, (c) => c.get("c1")?.hash)).toBe("c1");
      // A project's newer artifact replaces its older one in the count.
      await inProject(0, (a) => a.put(artifact("a2", chars)));
      expect(artifactCharsInMemory() - before).toBeLessThanOrEqual(2 * chars + 1_000);
    } finally {
      Object.assign(limits, saved);
    }
  });
});
