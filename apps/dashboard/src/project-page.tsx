import { useMemo } from "react";
import { ItxProvider, useItx } from "iterate/react";
import { AgentChat } from "./agent-chat.tsx";
import { ContextTree } from "./context-tree.tsx";
import { Repl } from "./repl.tsx";
import { routeHref, TABS, type Route } from "./route.ts";
import { SecretsView } from "./secrets-view.tsx";
import { StreamViewer } from "./stream-viewer.tsx";

const TAB_NAMES = { context: "Context", stream: "Stream", agent: "Agent", secrets: "Secrets", repl: "REPL" } as const;

/** One project: its root context shared with every tab through a nested ItxProvider. */
export function ProjectPage({ route }: { route: Route & { page: "project" } }) {
  const session = useItx();
  // One stub per project: a new one each render would re-run every hook below.
  const project = useMemo(() => session.projects.get(route.slug), [session, route.slug]);
  return (
    <ItxProvider itx={project}>
      <nav className="tabs">
        {TABS.map((tab) => (
          <a key={tab} href={routeHref({ ...route, tab, path: undefined })} className={tab === route.tab ? "active" : ""}>
            {TAB_NAMES[tab]}
          </a>
        ))}
      </nav>
      {route.tab === "context" && <ContextTree route={route} />}
      {route.tab === "stream" && <StreamViewer route={route} />}
      {route.tab === "agent" && <AgentChat route={route} />}
      {route.tab === "secrets" && <SecretsView />}
      {route.tab === "repl" && <Repl />}
    </ItxProvider>
  );
}
