/** How deep `isPlainData` looks before it answers false (the value then takes the general road). */
export const PLAIN_DATA_DEPTH_MAX = 64;

/**
 * True when a value passes by copy alone: primitives, dates, byte arrays, errors, and arrays and
 * plain objects of those. Anything that holds a stub, a function, a stream or a Request does not.
 */
export function isPlainData(value: unknown, depth = 0): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case "undefined":
    case "boolean":
    case "number":
    case "bigint":
    case "string":
      return true;
    case "object":
      break;
    default:
      return false;
  }
  if (depth >= PLAIN_DATA_DEPTH_MAX) return false;
  if (Array.isArray(value)) return value.every((item) => isPlainData(item, depth + 1));
  if (value instanceof Date || value instanceof Uint8Array || value instanceof ArrayBuffer) return true;
  const prototype = Object.getPrototypeOf(value);
  if (value instanceof Error) return Object.values(value).every((item) => isPlainData(item, depth + 1));
  if (prototype !== Object.prototype && prototype !== null) return false;
  return Object.values(value).every((item) => isPlainData(item, depth + 1));
}
