// The REPL's history, per browser (localStorage): newest first, no duplicates, bounded.
const KEY = "iterate.repl.history";
const MAX_ENTRIES = 50;

export function loadHistory(): string[] {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(KEY) ?? "[]");
    return Array.isArray(parsed) ? parsed.filter((entry): entry is string => typeof entry === "string") : [];
  } catch {
    return [];
  }
}

export function remember(code: string): string[] {
  const next = [code, ...loadHistory().filter((entry) => entry !== code)].slice(0, MAX_ENTRIES);
  localStorage.setItem(KEY, JSON.stringify(next));
  return next;
}
