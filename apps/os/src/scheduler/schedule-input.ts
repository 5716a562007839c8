import type { ScheduleSummary } from "iterate/types";
import { ItxError } from "iterate/errors";
import { parseScriptSource } from "../worker-loader/run-script.ts";
import { parseCadence, type Cadence } from "./schedule-clock.ts";
import { RESERVED_PATH_SEGMENTS } from "../capability-host/capability-path.ts";
import { LIMITS, limitDetails } from "../limits.ts";

/** A schedule definition as `itx.scheduler.set` takes it, validated. */
export type ScheduleDefinition = { key: string; script: string } & Cadence;

/** What `list()` and `set()` answer for one schedule (the public `ScheduleSummary`). */
export type ScheduleView = ScheduleSummary;

/** Validates a schedule key: 1-128 characters of letters, digits and . _ ~ - / :, and not a reserved name. */
export function parseScheduleKey(key: unknown): string {
  if (typeof key !== "string" || key.length === 0) throw new ItxError("INVALID_ARGUMENT", "a schedule key is a non-empty string");
  if (key.length > LIMITS.KEY_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", `a schedule key is at most ${LIMITS.KEY_MAX_LENGTH} characters`, { details: limitDetails("KEY_MAX_LENGTH") });
  }
  if (!/^[A-Za-z0-9._~:/-]+$/.test(key)) throw new ItxError("INVALID_ARGUMENT", "a schedule key is letters, digits and . _ ~ - / :");
  // Keys name rows of the fold's schedules object: "constructor" or "__proto__" would read Object's own members.
  if (RESERVED_PATH_SEGMENTS.has(key)) throw new ItxError("INVALID_ARGUMENT", `"${key}" is reserved and cannot be a schedule key`);
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
  if (source.length > LIMITS.SCRIPT_MAX_LENGTH) {
    throw new ItxError("INVALID_ARGUMENT", `a schedule's script is at most ${LIMITS.SCRIPT_MAX_LENGTH} characters`, {
      details: limitDetails("SCRIPT_MAX_LENGTH"),
    });
  }
  return { key: parsedKey, script: source, ...cadence };
}
