/** Where progress goes: a terminal gets a live line, anything else nothing. */
export interface ProgressSink {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** How long a call may take before the CLI shows that it is waiting. */
export const PROGRESS_AFTER_MS = 1_000;
const FRAME_MS = 100;
const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * Awaits `work`; when it takes longer than PROGRESS_AFTER_MS and `sink` is a terminal, shows a
 * spinner with `label` and the time so far on one line, erased when the work settles. Scripts
 * (no terminal) see nothing, so their stderr stays clean.
 */
export async function withProgress<T>(sink: ProgressSink, label: string, work: PromiseLike<T>, now: () => number = Date.now): Promise<T> {
  if (!sink.isTTY) return await work;
  const start = now();
  let frame = 0;
  let shown = false;
  let ticker: ReturnType<typeof setInterval> | undefined;
  const draw = () => {
    shown = true;
    const seconds = ((now() - start) / 1000).toFixed(1);
    sink.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${label} (${seconds}s)`);
  };
  const delay = setTimeout(() => {
    draw();
    ticker = setInterval(draw, FRAME_MS);
  }, PROGRESS_AFTER_MS);
  try {
    return await work;
  } finally {
    clearTimeout(delay);
    if (ticker !== undefined) clearInterval(ticker);
    if (shown) sink.write("\r\x1b[2K");
  }
}
