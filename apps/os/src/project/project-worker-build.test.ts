import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, test } from "vitest";
import { LIMITS } from "../limits.ts";
import { ArtifactStore } from "./project-worker-build.ts";

const artifact = (hash: string, chars: number) => ({ hash, mainModule: "main.js", modules: { "main.js": "x".repeat(chars) } });

describe("the project's artifact store", () => {
  test("an artifact too big for a row (PROJECT_ARTIFACT_MAX_CHARS) is kept in memory, so the project's host does not rebuild it on every request", async () => {
    const stub = env.STREAM.getByName(`prj_artifacts${Date.now()}:/`);
    await runInDurableObject(stub, (_instance, state) => {
      const store = new ArtifactStore(state.storage.sql);
      const small = artifact("small", 10);
      const large = artifact("large", LIMITS.PROJECT_ARTIFACT_MAX_CHARS);
      store.put(small);
      store.put(large);
      expect(store.get("small")).toEqual(small);
      expect(store.get("large")).toEqual(large);
      // Only the newest large one is held; rows are what a restart keeps.
      const larger = artifact("larger", LIMITS.PROJECT_ARTIFACT_MAX_CHARS + 1);
      store.put(larger);
      expect(store.get("large")).toBeUndefined();
      expect(store.get("larger")).toEqual(larger);
      const restarted = new ArtifactStore(state.storage.sql);
      expect(restarted.get("small")).toEqual(small);
      expect(restarted.get("larger")).toBeUndefined();
    });
  });
});
