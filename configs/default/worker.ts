import { IterateConfigEntrypoint } from "iterate/sdk";
import type { StreamEvent } from "iterate/types";
import { homepage } from "./apps/home.ts";

/**
 * This project's own worker. The platform loads it for the project's root context: lifecycle
 * events arrive at processEvent, HTTP for the project's host at fetch, and every other method is
 * callable from any context of the project as `itx.worker.<method>(...)`.
 */
export default class ProjectWorker extends IterateConfigEntrypoint {
  async processEvent(event: StreamEvent): Promise<void> {
    switch (event.type) {
      case "events.iterate.com/project/created": {
        using itx = this.getItx();
        // The deployment's default model: no `llm` given.
        using agent = itx.agents.get("/agents/onboarding");
        // Creating it starts its processor; it speaks when someone messages it.
        await agent.create({
          systemPrompt: "You help the people of this project set it up. Read AGENTS.md in /repos/config to learn how the project is changed.",
        });
        return;
      }
      case "events.iterate.com/project/worker-updated": {
        using itx = this.getItx();
        // Setting an unchanged schedule keeps its clock: this is safe on every update.
        await itx.scheduler.set({
          key: "heartbeat",
          every: 15 * 60,
          script: 'async (itx) => { await itx.append({ type: "events.iterate.com/project/heartbeat-triggered", payload: { scheduleKey: "heartbeat" } }); }',
        });
        return;
      }
      case "events.iterate.com/project/heartbeat-triggered":
        // Runs every 15 minutes: put periodic work here.
        return;
      case "events.iterate.com/stream/woken":
        // The project's root stream came up again after the OS restarted or the stream idled out
        // (event.payload.incarnation names this start). Re-establish what does not survive one.
        return;
      default:
        return;
    }
  }

  async fetch(): Promise<Response> {
    return new Response(homepage(this.projectSlug()), { headers: { "content-type": "text/html; charset=utf-8" } });
  }
}
