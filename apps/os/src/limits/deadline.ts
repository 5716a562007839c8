/**
 * `work`'s outcome, or `late()`'s once `ms` pass first (a `late` that throws rejects). The timer is
 * cleared either way, so a race that settled leaves no timer behind; `work` itself is not stopped.
 *
 * @example
 * const answer = await raceDeadline(session.release(), 5_000, () => "unanswered" as const);
 */
export async function raceDeadline<T, L>(work: Promise<T>, ms: number, late: () => L): Promise<T | L> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<L>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(late());
      } catch (error) {
        reject(error);
      }
    }, Math.max(0, ms));
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
