import { useCallback, useEffect, useState } from "react";
import type { Description } from "../types.ts";
import { useItx, type AnyHandle, type AsyncState } from "./provider.ts";

/**
 * `__describe()` of the provider's handle, or of the context at `path` (`itx.cd(path)`) when one
 * is given. `refresh()` asks again.
 *
 * @example
 * const { data } = useDescribe("/agents/support");
 * return <ul>{Object.entries(data?.children ?? {}).map(([name, line]) => <li key={name}>{name}: {line}</li>)}</ul>;
 */
export function useDescribe<T extends Description = Description>(path?: string): AsyncState<T> & { refresh(): void } {
  const itx = useItx();
  const [state, setState] = useState<AsyncState<T>>({ data: undefined, error: undefined, loading: true });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let live = true;
    setState((previous) => ({ ...previous, loading: true }));
    const target: AnyHandle = path === undefined || path === "" ? itx : itx.cd(path);
    Promise.resolve(target.__describe()).then(
      (data: T) => live && setState({ data, error: undefined, loading: false }),
      (error: unknown) => live && setState({ data: undefined, error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [itx, path, generation]);
  const refresh = useCallback(() => setGeneration((n) => n + 1), []);
  return { ...state, refresh };
}
