import { useDescribe, useItx } from "iterate/react";
import type { ItxDescription } from "iterate/types";
import { ErrorLine } from "./error-line.tsx";
import { PathBar } from "./path-bar.tsx";
import { navigate, routeHref, type Route } from "./route.ts";
import { useCall } from "./use-call.ts";

/** A context as its own `__describe()` tells it: members, mounted capabilities, parent, agents below. */
export function ContextTree({ route }: { route: Route & { page: "project" } }) {
  const itx = useItx();
  const path = route.path ?? "/";
  const described = useDescribe<ItxDescription>(path);
  const agents = useCall<Array<{ path: string }>>(() => itx.agents.list(), [itx]);
  const go = (next: string) => navigate({ ...route, tab: "context", path: next });
  const data = described.data;
  const parent = path === "/" ? undefined : path.slice(0, path.lastIndexOf("/")) || "/";
  return (
    <section>
      <PathBar label="Context" value={path} onGo={go} />
      <ErrorLine error={described.error} />
      {data && (
        <div data-testid="context">
          <h3>
            <code>{data.context}</code>
            {parent !== undefined && (
              <a className="small" href={routeHref({ ...route, tab: "context", path: parent })}>
                ↑ {parent}
              </a>
            )}
          </h3>
          <p className="prose">{data.instructions}</p>
          <h4>Members</h4>
          <table>
            <tbody>
              {Object.entries(data.children).map(([name, line]) => (
                <tr key={name}>
                  <td>
                    <code>{name}</code>
                  </td>
                  <td className="muted">{line}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h4>Capabilities</h4>
          {data.capabilities.length === 0 && <p className="muted">None mounted on this chain.</p>}
          <ul className="list">
            {data.capabilities.map((capability) => (
              <li key={JSON.stringify(capability)}>
                <code>{capabilityName(capability)}</code> <span className="muted">{capabilityNote(capability)}</span>
              </li>
            ))}
          </ul>
        </div>
      )}
      <h4>Agents</h4>
      <ul className="list">
        {(agents.data ?? []).map((agent) => (
          <li key={agent.path}>
            <a href={routeHref({ ...route, tab: "context", path: agent.path })}>{agent.path}</a>
            {" · "}
            <a href={routeHref({ ...route, tab: "agent", path: agent.path })}>chat</a>
            {" · "}
            <a href={routeHref({ ...route, tab: "stream", path: agent.path })}>stream</a>
          </li>
        ))}
      </ul>
    </section>
  );
}

function capabilityName(capability: unknown): string {
  const row = capability as { path?: unknown; name?: unknown };
  if (Array.isArray(row.path)) return row.path.join(".");
  return String(row.path ?? row.name ?? "?");
}

function capabilityNote(capability: unknown): string {
  const row = capability as { instructions?: unknown; status?: unknown; kind?: unknown };
  return [row.kind, row.status, row.instructions].filter((part) => typeof part === "string").join(" · ");
}
