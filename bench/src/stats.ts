/** Summary statistics over a series of timings in milliseconds. */
export interface Summary {
  count: number;
  median: number;
  p90: number;
  p99: number;
  max: number;
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
    max: at(1),
    mean: sorted.reduce((sum, value) => sum + value, 0) / sorted.length,
  };
}

/** Prints one figure as `name: value unit`, the format every benchmark line uses. */
export function report(name: string, value: number, unit: string): void {
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 3;
  console.log(`${name}: ${value.toFixed(digits)} ${unit}`);
}

/** A p99 this many times its median is flagged where it is printed, and explained in bench/README.md ("Tails"). */
export const TAIL_RATIO = 10;

/**
 * Prints the p99 of a series beside its median, as `<name>.p99`, with the sample count and its
 * ratio to the median; one over TAIL_RATIO x says so on its line. With fewer than 100 samples the
 * p99 is the slowest sample.
 */
export function reportTail(name: string, summary: Summary, unit = "ms"): void {
  const ratio = summary.p99 / summary.median;
  const tail = ratio > TAIL_RATIO ? `; over ${TAIL_RATIO}x its median: see "Tails" in bench/README.md` : "";
  report(`${name}.p99`, summary.p99, `${unit} (n=${summary.count}, ${ratio.toFixed(1)}x median${tail})`);
}

/** Times one async call in milliseconds. */
export async function time(call: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await call();
  return performance.now() - start;
}

/**
 * Times every series once per round for `rounds` rounds, in a fresh random order each round.
 * Interleaving makes machine noise hit all series alike; shuffling (rather than only rotating,
 * which keeps each series behind the same neighbour) spreads the work one call leaves behind
 * (an `itx.run` keeps the Worker busy for a moment after it answers) over all series alike.
 * Answers the samples by series name.
 */
export async function interleave<Name extends string>(rounds: number, series: Record<Name, () => Promise<unknown>>): Promise<Record<Name, number[]>> {
  const names = Object.keys(series) as Name[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<Name, number[]>;
  for (let round = 0; round < rounds; round++) {
    for (const name of shuffled(names)) samples[name].push(await time(series[name]));
  }
  return samples;
}

function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

/**
 * Reads of `events` events from the start, ours against the peer's, timed in rounds: the rates
 * from the medians, their ratio against `target`, and each side's slowest round (the tail).
 */
export function reportReadRates(prefix: string, events: number, ours: number[], peer: number[], target: string): void {
  const rate = events / (summarize(ours).median / 1000);
  const peerRate = events / (summarize(peer).median / 1000);
  report(`${prefix}_rate`, rate, "events/s");
  report(`${prefix}_rate.peer_durable_streams_file`, peerRate, "events/s");
  report(`${prefix}_rate.ratio_to_peer`, rate / peerRate, `x (${target})`);
  report(`${prefix}.slowest_round`, summarize(ours).max, "ms");
  report(`${prefix}.peer_durable_streams_file.slowest_round`, summarize(peer).max, "ms");
}
