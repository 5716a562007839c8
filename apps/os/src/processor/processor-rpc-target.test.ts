import { env } from "cloudflare:workers";
import { describe, expect, test } from "vitest";
import { expectCode } from "iterate/stream/test-support";
import { ensureContext } from "../itx/context-lifecycle.ts";
import { SUBSCRIPTION_CONFIGURED } from "../stream/stream-core.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";
import { ProcessorRpcTarget } from "./processor-rpc-target.ts";
import { USER_PROCESSOR_BINDING, USER_PROCESSOR_ROW_PREFIX, userProcessorHostName } from "./user-processor-address.ts";

let counter = 0;
const root = { principal: "tester", origin: "/" };

/** A project with contexts /work (and its child /work/inbox) and /agents/a, and `itx.processor` on /work/inbox as `caller`. */
async function fresh(): Promise<{ projectId: string; processorAs(origin: string): ProcessorRpcTarget }> {
  counter += 1;
  const projectId = `prj_procrows${Date.now()}${counter}`;
  await ensureContext(env, { projectId, path: "/", name: "test", parent: null, ancestors: [], caller: root });
  await ensureContext(env, { projectId, path: "/work", name: "work", parent: "/", ancestors: ["/"], caller: root });
  await ensureContext(env, { projectId, path: "/work/inbox", name: "inbox", parent: "/work", ancestors: ["/", "/work"], caller: root });
  await ensureContext(env, { projectId, path: "/agents/a", name: "a", parent: "/", ancestors: ["/"], caller: root });
  const where = async () => ({ projectId, path: "/work/inbox" });
  return { projectId, processorAs: (origin) => new ProcessorRpcTarget({ env, where, caller: { principal: "tester", origin } }) };
}

/** The row `itx.processor.subscribe` writes for `key` (written here directly: no config worker is built in these tests). */
function rowOf(projectId: string, key: string) {
  const subscription = { type: "processor", binding: USER_PROCESSOR_BINDING, host: userProcessorHostName({ projectId, path: "/work/inbox", key, className: "TallyDurableObject" }), processor: key };
  return { type: SUBSCRIPTION_CONFIGURED, payload: { key: `${USER_PROCESSOR_ROW_PREFIX}${key}`, subscription } };
}

describe("itx.processor rows: authority flows down the tree", () => {
  test("a sibling cannot subscribe, replace or unsubscribe a context's processors; the context and its ancestors can", async () => {
    const { projectId, processorAs } = await fresh();
    const stream = streamStub(env.STREAM, `${projectId}:/work/inbox`);
    await stream.append({ events: [rowOf(projectId, "tally")], stamp: { ...root, platform: "processor" } });
    const rows = async () => (await processorAs("/").list()).map((row) => row.key);
    expect(await rows()).toEqual(["tally"]);

    // Code acting as /agents/a is no ancestor of /work/inbox: it may neither remove nor replace the row.
    const sibling = processorAs("/agents/a");
    await expectCode(sibling.unsubscribe("tally"), "PERMISSION_DENIED");
    await expectCode(sibling.subscribe({ key: "tally", className: "SpinnerDurableObject" }), "PERMISSION_DENIED");
    await expectCode(sibling.subscribe({ key: "mine", className: "TallyDurableObject" }), "PERMISSION_DENIED");
    expect(await rows()).toEqual(["tally"]);

    // The context itself and each ancestor may.
    expect(await processorAs("/work/inbox").unsubscribe("tally")).toBe(true);
    await stream.append({ events: [rowOf(projectId, "tally")], stamp: { ...root, platform: "processor" } });
    expect(await processorAs("/work").unsubscribe("tally")).toBe(true);
    expect(await processorAs("/").unsubscribe("tally")).toBe(false);
  });
});
