import { errorCode, errorMessage } from "../../../errors/index.ts";
import {
  MAX_RUN_ATTEMPTS,
  StreamProcessor,
  factName,
  nextRunAction,
  settledKey,
  stepKey,
  type BackgroundContext,
  type EmittedInput,
  type ProcessEventArgs,
  type ReduceArgs,
  type RunStatus,
} from "../../processor/index.ts";
import { GREETER_EVENTS, GreeterContract, isSupportedLanguage, reduceGreeter, type GreeterState } from "./contract.ts";
import type { Mailer } from "./mailer.ts";

type Contract = typeof GreeterContract;
type GreetingRun = GreeterState["runs"][string];

const SLUG = GreeterContract.slug;

/** The background key of a run's driver: one driver per run per host. */
export function driverKey(requestOffset: number): string {
  return `${SLUG}/run:${requestOffset}`;
}

export function composeGreeting(run: Pick<GreetingRun, "name" | "language">): string {
  return run.language === "fr" ? `Bonjour, ${run.name} !` : `Hello, ${run.name}!`;
}

function settled(requestOffset: number, status: RunStatus, error?: string): EmittedInput<Contract> {
  return {
    type: GREETER_EVENTS.settled,
    // No key holds undefined: the stream compares a repeat with stored JSON, which has no such key.
    payload: error === undefined ? { requestOffset, status } : { requestOffset, status, error },
    idempotencyKey: settledKey(SLUG, requestOffset),
  };
}

/**
 * Mails a greeting per request. processEvent only decides; a background driver per open run does
 * the work, one attempt at a time, landing a keyed fact per step and settling the run once.
 *
 * @example
 * const engine = new ProcessorEngine({ stream, storage, processors: [new Greeter(mailer)] });
 * await stream.append({ type: GREETER_EVENTS.requested, payload: { name: "Ada", to: "ada@example.com", language: "en" } });
 */
export class Greeter extends StreamProcessor<Contract> {
  readonly contract = GreeterContract;
  readonly #mailer: Mailer;

  constructor(mailer: Mailer) {
    super();
    this.#mailer = mailer;
  }

  override reduce({ event, state }: ReduceArgs<Contract>) {
    return reduceGreeter(state, event);
  }

  override async processEvent({ event, state, append, blockProcessorWhile, runInBackground, delivery }: ProcessEventArgs<Contract>) {
    if (event?.type === GREETER_EVENTS.requested && !isSupportedLanguage(event.payload.language)) {
      // No run remembers this request, so no later pass could settle it: settle it before moving on.
      blockProcessorWhile(append(settled(event.offset, "refused", `no greeting in "${event.payload.language}"`)));
    }
    if (!delivery.caughtUp) return;
    for (const run of Object.values(state.runs)) {
      await runInBackground(driverKey(run.requestOffset), (context) => this.#drive(run.requestOffset, context));
    }
  }

  /** One attempt of one run, decided from the newest folded state when the driver starts. */
  async #drive(requestOffset: number, { state, append }: BackgroundContext<Contract>): Promise<void> {
    const run = state().runs[requestOffset];
    const action = nextRunAction(run);
    if (run === undefined || action.kind === "none") return;
    if (action.kind === "exhausted") {
      await append(settled(requestOffset, "unavailable", `${MAX_RUN_ATTEMPTS} attempts ended before settling`));
      return;
    }
    const { attempt } = action;
    const key = (type: string) => stepKey(SLUG, factName(type), requestOffset, attempt);
    await append({ type: GREETER_EVENTS.attemptStarted, payload: { requestOffset, attempt }, idempotencyKey: key(GREETER_EVENTS.attemptStarted) });
    let outcome: EmittedInput<Contract>;
    try {
      const text = composeGreeting(run);
      await append({ type: GREETER_EVENTS.composed, payload: { requestOffset, attempt, text }, idempotencyKey: key(GREETER_EVENTS.composed) });
      // Keyed by the request, not the attempt: a later attempt finds the earlier attempt's success.
      const result = await this.#mailer.send({ to: run.to, text, idempotencyKey: `${SLUG}/greeting:${requestOffset}` });
      if (result.status === "refused") {
        outcome = settled(requestOffset, "refused", result.reason);
      } else {
        await append({
          type: GREETER_EVENTS.delivered,
          payload: { requestOffset, attempt, receiptId: result.receiptId },
          idempotencyKey: key(GREETER_EVENTS.delivered),
        });
        outcome = settled(requestOffset, "succeeded");
      }
    } catch (error) {
      outcome = settled(requestOffset, errorCode(error) === "UNAVAILABLE" ? "unavailable" : "failed", errorMessage(error));
    }
    await append(outcome);
  }
}
