import { z } from "zod";
import {
  defineProcessorContract,
  runAttemptPayloadSchema,
  runSettledPayloadSchema,
  runState,
  runStateSchema,
  type ConsumedEvent,
  type StateOf,
} from "../../processor/index.ts";

/**
 * The greeter: a multi-step run in miniature. A request asks for a greeting; each attempt composes
 * it, mails it, and settles the run. The types sit under a project's own domain, so the platform
 * treats them as opaque.
 */
export const GREETER_EVENTS = {
  requested: "events.example.com/greeter/greeting-requested",
  attemptStarted: "events.example.com/greeter/greeting-attempt-started",
  composed: "events.example.com/greeter/greeting-composed",
  delivered: "events.example.com/greeter/greeting-delivered",
  settled: "events.example.com/greeter/greeting-settled",
} as const;

export const SUPPORTED_LANGUAGES = ["en", "fr"] as const;
export type Language = (typeof SUPPORTED_LANGUAGES)[number];

export function isSupportedLanguage(language: string): language is Language {
  return (SUPPORTED_LANGUAGES as readonly string[]).includes(language);
}

/** A run, plus what the request asked for: the next incarnation reads it from here, never from a call. */
const greetingRunSchema = runStateSchema.extend({
  name: z.string(),
  to: z.string(),
  language: z.enum(SUPPORTED_LANGUAGES),
});

export const GreeterContract = defineProcessorContract({
  slug: "greeter",
  version: "1.0.0",
  description: "Mails a greeting for every request, retrying attempts its host did not live to finish.",
  stateSchema: z.object({
    /** Open runs by request offset; a run leaves when it settles. */
    runs: z.record(z.string(), greetingRunSchema).default({}),
    /** Settled runs counted by status. */
    totals: z.record(z.string(), z.number().int()).default({}),
  }),
  events: {
    // language is any string on purpose: an unsupported one is refused, not skipped as invalid.
    [GREETER_EVENTS.requested]: z.strictObject({ name: z.string().min(1).max(80), to: z.string().min(3), language: z.string() }),
    [GREETER_EVENTS.attemptStarted]: runAttemptPayloadSchema,
    [GREETER_EVENTS.composed]: runAttemptPayloadSchema.extend({ text: z.string() }),
    [GREETER_EVENTS.delivered]: runAttemptPayloadSchema.extend({ receiptId: z.string() }),
    [GREETER_EVENTS.settled]: runSettledPayloadSchema,
  },
  consumes: Object.values(GREETER_EVENTS),
  emits: [GREETER_EVENTS.attemptStarted, GREETER_EVENTS.composed, GREETER_EVENTS.delivered, GREETER_EVENTS.settled],
});

export type GreeterState = StateOf<typeof GreeterContract>;
export type GreeterEvent = ConsumedEvent<typeof GreeterContract>;

const greetingRun = runState({
  requested: GREETER_EVENTS.requested,
  attemptStarted: GREETER_EVENTS.attemptStarted,
  steps: [GREETER_EVENTS.composed, GREETER_EVENTS.delivered],
  settled: GREETER_EVENTS.settled,
});

/** The greeter's pure reduce. A request in an unsupported language opens no run. */
export function reduceGreeter(state: GreeterState, event: GreeterEvent): GreeterState {
  const key = greetingRun.runOf(event);
  if (key === undefined) return state;
  if (event.type === GREETER_EVENTS.settled) {
    const { [key]: _settled, ...runs } = state.runs;
    const { status } = event.payload;
    return { runs, totals: { ...state.totals, [status]: (state.totals[status] ?? 0) + 1 } };
  }
  if (event.type === GREETER_EVENTS.requested) {
    const { name, to, language } = event.payload;
    const opened = greetingRun.reduce(undefined, event);
    if (!isSupportedLanguage(language) || opened === undefined) return state;
    return { ...state, runs: { ...state.runs, [key]: { ...opened, name, to, language } } };
  }
  const run = state.runs[key];
  const next = greetingRun.reduce(run, event);
  if (run === undefined || next === run || next === undefined) return state;
  return { ...state, runs: { ...state.runs, [key]: { ...run, ...next } } };
}
