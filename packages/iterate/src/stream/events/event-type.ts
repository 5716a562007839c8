import { invalidInput } from "./invalid-argument.ts";
import { STREAM_LIMITS } from "./limits.ts";

/** The prefix that marks a type as the platform's own; everything under it follows the naming rules. */
export const PLATFORM_EVENT_PREFIX = "events.iterate.com/";

// Any type: lowercase ASCII letters, digits and `. _ ~ : / -`, starting with a letter or digit.
// Lowercase only, so that two types never differ by case alone.
const TYPE_PATTERN = /^[a-z0-9][a-z0-9._~:/-]*$/;
// One segment of a platform type: lowercase words of letters and digits joined by single hyphens.
const KEBAB_SEGMENT = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/**
 * True when `type` sits under `events.iterate.com/` and so must follow the platform naming rules.
 *
 * @example
 * isPlatformEventType("events.iterate.com/agent/paused"); // true
 * isPlatformEventType("demo/ping"); // false: opaque to the platform
 */
export function isPlatformEventType(type: string): boolean {
  return type.startsWith(PLATFORM_EVENT_PREFIX);
}

/** The problems that make `type` unusable as an event type at all; empty when it is well formed. */
export function eventTypeFormatProblems(type: unknown): string[] {
  if (typeof type !== "string") return ["an event type must be a string"];
  if (type.length === 0) return ["an event type must not be empty"];
  if (type.length > STREAM_LIMITS.EVENT_TYPE_MAX_LENGTH) {
    return [`an event type is at most ${STREAM_LIMITS.EVENT_TYPE_MAX_LENGTH} characters, got ${type.length}`];
  }
  const problems: string[] = [];
  if (!TYPE_PATTERN.test(type)) {
    problems.push(
      `"${printable(type)}" may hold only lowercase letters, digits and . _ ~ : / - and must start with a letter or digit`,
    );
  }
  if (type.includes("//")) problems.push(`"${printable(type)}" has an empty segment ("//")`);
  if (type.endsWith("/")) problems.push(`"${printable(type)}" ends with "/"`);
  return problems;
}

/** The structural problems of a platform type: `events.iterate.com/<namespace>/<event>`, both kebab-case. */
function platformShapeProblems(type: string): string[] {
  const segments = type.slice(PLATFORM_EVENT_PREFIX.length).split("/");
  if (segments.length !== 2) {
    return [
      `"${type}" must be ${PLATFORM_EVENT_PREFIX}<namespace>/<event>: exactly two segments after the prefix, got ${segments.length}`,
    ];
  }
  const problems: string[] = [];
  const [namespace = "", event = ""] = segments;
  if (!KEBAB_SEGMENT.test(namespace)) problems.push(`namespace "${namespace}" of "${type}" is not lowercase kebab-case`);
  if (!KEBAB_SEGMENT.test(event)) problems.push(`event "${event}" of "${type}" is not lowercase kebab-case`);
  return problems;
}

/**
 * Throws INVALID_ARGUMENT unless `type` is a well-formed event type. Types under
 * `events.iterate.com/` must also have exactly one kebab-case namespace and one kebab-case event
 * segment. The stream checks this on every append; the style rules of `checkPlatformEventName`
 * (past tense and so on) are left to lint and tests.
 *
 * @example
 * validateEventType("events.garple.com/sales/lead-created"); // ok: opaque to the platform
 * validateEventType("events.iterate.com/agent/llm/requested"); // throws: a third segment
 */
export function validateEventType(type: unknown): asserts type is string {
  if (typeof type === "string" && knownGood.has(type)) return;
  const problems = eventTypeFormatProblems(type);
  if (problems.length === 0 && typeof type === "string" && isPlatformEventType(type)) {
    problems.push(...platformShapeProblems(type));
  }
  if (problems.length > 0) throw invalidInput(`invalid event type: ${problems.join("; ")}`, { field: "type" });
  if (knownGood.size >= KNOWN_GOOD_MAX) knownGood.clear();
  knownGood.add(type as string);
}

// Types seen to be valid. A stream sees few distinct types, each on every append, and the check is a
// pure function of the string, so remembering its successes changes no answer. Bounded: a writer
// inventing a type per event empties it rather than growing it.
const KNOWN_GOOD_MAX = 1024;
const knownGood = new Set<string>();

// Past participles that do not end in -ed. A platform fact's last word is one of these or ends in -ed.
const IRREGULAR_PAST = new Set(
  (
    "arisen awoken become begun bound broken brought built bought caught chosen cut dealt done drawn driven " +
    "fallen felt flown forbidden forgotten found frozen given gone grown held hidden hit hung kept known laid " +
    "led left lent lost made meant met overridden overrun paid put quit read rebuilt rerun reset rewritten " +
    "ridden risen run seen sent set shown shut sold spent split spoken spun stolen struck stuck swept taken " +
    "taught thought thrown told undone upheld withdrawn woken won written"
  ).split(" "),
);

/** Nouns the rules allow, for ephemeral events only: a stream frame, a heartbeat, a diagnostic record. */
function isAllowedNoun(event: string): boolean {
  return event.endsWith("-frame") || event === "keepalive" || event.endsWith("-trace");
}

// Names the design pins although they are not past-tense facts; they keep their spelling.
const PINNED_NAMES: ReadonlySet<string> = new Set([`${PLATFORM_EVENT_PREFIX}itx/loop-limit`]);

function styleProblems(type: string): string[] {
  if (PINNED_NAMES.has(type)) return [];
  const event = type.slice(type.lastIndexOf("/") + 1);
  const lastWord = event.slice(event.lastIndexOf("-") + 1);
  if (lastWord.endsWith("ed") || IRREGULAR_PAST.has(lastWord) || isAllowedNoun(event)) return [];
  return [
    `event "${event}" of "${type}" should be a past-tense fact (<object>-<verb-ed>); "${lastWord}" is not a past participle`,
  ];
}

/**
 * Lists what is wrong with the name of a platform event type, for a repository-wide test. A type
 * outside `events.iterate.com/` belongs to whoever appends it, so only its format is checked.
 * Beyond the structure the stream enforces, a platform fact must end in a past participle; the
 * three noun forms allowed for ephemeral events (`*-frame`, `keepalive`, `*-trace`) also pass,
 * because a name alone does not say whether an event is ephemeral.
 *
 * @example
 * checkPlatformEventName("events.iterate.com/agent/paused"); // []
 * checkPlatformEventName("events.iterate.com/agent/pause"); // ["event \"pause\" ... past-tense fact ..."]
 */
export function checkPlatformEventName(type: string): string[] {
  const format = eventTypeFormatProblems(type);
  if (format.length > 0 || !isPlatformEventType(type)) return format;
  const shape = platformShapeProblems(type);
  return shape.length > 0 ? shape : styleProblems(type);
}

// Control characters in an error message would garble logs; show them escaped.
function printable(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}
