/** Summary statistics over a series of timings in milliseconds. */
export interface Summary {
  count: number;
  median: number;
  p90: number;
  p99: number;
  mean: number;
}

export function summarize(samples: number[]): Summary {
  if (samples.length === 0) throw new Error("no samples");
  const sorted = samples.toSorted((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
  return {
    count: sorted.length,
    median: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    mean: sorted.reduce((sum, value) => sum + value, 0) / sorted.length,
  };
}

/** Prints one figure as `name: value unit`, the format every benchmark line uses. */
export function report(name: string, value: number, unit: string): void {
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 3;
  console.log(`${name}: ${value.toFixed(digits)} ${unit}`);
}

/** Times one async call in milliseconds. */
export async function time(call: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await call();
  return performance.now() - start;
}
