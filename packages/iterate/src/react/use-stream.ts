import { useEffect, useState } from "react";
import type { StreamEvent } from "../types.ts";
import { useItx, type AnyHandle } from "./provider.ts";

export interface UseStreamOptions {
  /** Keep following the stream after its history: new events, ephemeral ones too, as they arrive. */
  live?: boolean;
  /** Start after this offset (default 0: the whole history). */
  afterOffset?: number;
  /** Keep at most this many events in state, the newest (default 1000). */
  maxEvents?: number;
}

export interface StreamState {
  /** History, then (with `live`) each event as it arrives; ephemeral events carry `ephemeral: true`. */
  events: StreamEvent[];
  /** False until the history has been read. */
  ready: boolean;
  error: unknown;
}

const DEFAULT_MAX_EVENTS = 1000;

/**
 * The events of the stream at `path` on the provider's handle (`itx.streams.get(path)`). With
 * `live`, one subscription replays the history and then tails, so nothing falls between the two;
 * unmounting unsubscribes.
 *
 * @example
 * const { events } = useStream("/orders", { live: true });
 * return <ol>{events.map((e) => <li key={`${e.offset}:${e.type}`}>{e.type}</li>)}</ol>;
 */
export function useStream(path: string, options: UseStreamOptions = {}): StreamState {
  const itx = useItx();
  const { live = false, afterOffset = 0, maxEvents = DEFAULT_MAX_EVENTS } = options;
  const [state, setState] = useState<StreamState>({ events: [], ready: false, error: undefined });
  useEffect(() => {
    let active = true;
    setState({ events: [], ready: false, error: undefined });
    const stream: AnyHandle = itx.streams.get(path);
    const keep = (events: StreamEvent[]) => (events.length > maxEvents ? events.slice(-maxEvents) : events);
    const fail = (error: unknown) => active && setState((previous) => ({ ...previous, ready: true, error }));
    let key: string | undefined;
    if (live) {
      const onBatch = (batch: StreamEvent[]) => {
        if (active) setState((previous) => ({ ...previous, events: keep([...previous.events, ...batch]) }));
      };
      Promise.resolve(stream.subscribe(onBatch, { afterOffset }))
        .then((answer: { key: string; head: number }) => {
          key = answer.key;
          if (!active) void Promise.resolve(stream.unsubscribe(answer.key)).catch(() => undefined);
          else setState((previous) => ({ ...previous, ready: true }));
        })
        .catch(fail);
    } else {
      Promise.resolve(stream.getEvents({ afterOffset, limit: maxEvents }))
        .then((events: StreamEvent[]) => active && setState({ events: keep(events), ready: true, error: undefined }))
        .catch(fail);
    }
    return () => {
      active = false;
      if (key !== undefined) void Promise.resolve(stream.unsubscribe(key)).catch(() => undefined);
    };
  }, [itx, path, live, afterOffset, maxEvents]);
  return state;
}
