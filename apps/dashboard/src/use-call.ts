import { useCallback, useEffect, useState } from "react";

/** One call's answer as state, asked again when `deps` change or `reload()` is called. */
export function useCall<T>(call: () => PromiseLike<T>, deps: readonly unknown[]): { data: T | undefined; error: unknown; reload(): void } {
  const [state, setState] = useState<{ data: T | undefined; error: unknown }>({ data: undefined, error: undefined });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let live = true;
    Promise.resolve(call()).then(
      (data) => live && setState({ data, error: undefined }),
      (error: unknown) => live && setState({ data: undefined, error }),
    );
    return () => {
      live = false;
    };
    // oxlint-disable-next-line react-hooks/exhaustive-deps -- the caller names what the call depends on
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  return { ...state, reload };
}
