import { ItxError } from "iterate/errors";

/**
 * Glob masks over repository paths: `*` matches within one segment, `**` any number of segments,
 * `?` one character, `{a,b}` either. A path is kept when it matches some include (or there are
 * none) and no exclude.
 */
export function pathFilter(masks: { include?: unknown; exclude?: unknown } = {}): (path: string) => boolean {
  const include = parseMasks(masks.include, "include").map(globToRegExp);
  const exclude = parseMasks(masks.exclude, "exclude").map(globToRegExp);
  return (path) => (include.length === 0 || include.some((re) => re.test(path))) && !exclude.some((re) => re.test(path));
}

const MASKS_MAX = 100;
const MASK_MAX_LENGTH = 256;

function parseMasks(value: unknown, name: string): string[] {
  if (value === undefined) return [];
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list) || list.length > MASKS_MAX || list.some((mask) => typeof mask !== "string" || mask.length === 0 || mask.length > MASK_MAX_LENGTH)) {
    throw new ItxError("INVALID_ARGUMENT", `${name} is a glob or a list of at most ${MASKS_MAX} globs of 1-${MASK_MAX_LENGTH} characters`);
  }
  return list as string[];
}

/** One glob as an anchored regular expression. */
export function globToRegExp(glob: string): RegExp {
  let out = "";
  let inBraces = false;
  for (let i = 0; i < glob.length; i += 1) {
    const c = glob[i] as string;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        // "**/" matches zero or more whole segments; a trailing "**" matches everything below.
        if (glob[i + 2] === "/") {
          out += "(?:[^/]*/)*";
          i += 2;
        } else {
          out += ".*";
          i += 1;
        }
      } else {
        out += "[^/]*";
      }
    } else if (c === "?") out += "[^/]";
    else if (c === "{" && !inBraces) {
      inBraces = true;
      out += "(?:";
    } else if (c === "}" && inBraces) {
      inBraces = false;
      out += ")";
    } else if (c === "," && inBraces) out += "|";
    else out += c.replace(/[.+^$()|[\]\\{}]/g, "\\$&");
  }
  if (inBraces) throw new ItxError("INVALID_ARGUMENT", `glob ${JSON.stringify(glob)} has an unclosed {`);
  return new RegExp(`^${out}$`);
}
