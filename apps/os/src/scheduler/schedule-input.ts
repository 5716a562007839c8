import type { ScheduleSummary } from "iterate/types";
import { ItxError } from "iterate/errors";
import { parseScriptSource } from "../worker-loader/run-script.ts";
import { parseCadence, type Cadence } from "./schedule-clock.ts";
import { SCHEDULER_LIMITS } from "./scheduler-limits.ts";

/** A schedule definition as `itx.scheduler.set` takes it, validated. */
export type ScheduleDefinition = { key: string; script: string } & Cadence;

/** What `list()` and `set()` answer for one schedule (the public `ScheduleSummary`). */
export type ScheduleView = ScheduleSummary;

/** Validates a schedule key: 1-128 characters of letters, digits and . _ ~ - / :. */
export function parseScheduleKey(key: unknown): string {
  if (typeof key !== "string" || key.length === 0) throw new ItxError("INVALID_ARGUMENT", "a schedule key is a non-empty string");
  if (key.length > SCHEDULER_LIMITS.KEY_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", `a schedule key is at most ${SCHEDULER_LIMITS.KEY_MAX_LENGTH} characters`, { details: { limit: "KEY_MAX_LENGTH" } });
  }
  if (!/^[A-Za-z0-9._~:/-]+$/.test(key)) throw new ItxError("INVALID_ARGUMENT", "a schedule key is letters, digits and . _ ~ - / :");
  return key;
}

/** Validates `{ key, every | cron, script }`; nothing else is accepted. */
export function parseScheduleDefinition(input: unknown): ScheduleDefinition {
  if (typeof input !== "object" || input === null) throw new ItxError("INVALID_ARGUMENT", "scheduler.set takes { key, every | cron, script }");
  const { key, every, cron, script, ...rest } = input as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw new ItxError("INVALID_ARGUMENT", `scheduler.set has no field(s) ${Object.keys(rest).join(", ")}`);
  const parsedKey = parseScheduleKey(key);
  const cadence = parseCadence({ every, cron });
  const source = parseScriptSource(script);
  if (source.length > SCHEDULER_LIMITS.SCRIPT_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", `a schedule's script is at most ${SCHEDULER_LIMITS.SCRIPT_MAX_LENGTH} characters`, {
      details: { limit: "SCRIPT_MAX_LENGTH" },
    });
  }
  return { key: parsedKey, script: source, ...cadence };
}
