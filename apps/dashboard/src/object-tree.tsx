/** A value as a collapsible tree: objects and arrays open to two levels, the rest inline. */
export function ObjectTree({ value, name, depth = 0 }: { value: unknown; name?: string; depth?: number }) {
  const label = name === undefined ? null : <span className="key">{name}: </span>;
  if (value === null || typeof value !== "object") {
    return (
      <div className="leaf">
        {label}
        <span className={`v-${typeof value}`}>{leaf(value)}</span>
      </div>
    );
  }
  const entries = safeEntries(value);
  const summary = Array.isArray(value) ? `Array(${value.length})` : value instanceof Date ? value.toISOString() : `{${entries.length}}`;
  return (
    <details open={depth < 2} className="node">
      <summary>
        {label}
        <span className="muted">{summary}</span>
      </summary>
      {entries.map(([key, child]) => (
        <ObjectTree key={key} name={key} value={child} depth={depth + 1} />
      ))}
    </details>
  );
}

function leaf(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "[remote object]";
  if (typeof value === "bigint") return `${value}n`;
  return String(value);
}

// A Cap'n Web stub is a function Proxy: listing its keys would ask the server, so it is a leaf above.
function safeEntries(value: object): Array<[string, unknown]> {
  try {
    return Object.entries(value).slice(0, 500);
  } catch {
    return [];
  }
}
