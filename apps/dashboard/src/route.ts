import { useEffect, useState } from "react";

/** The dashboard's pages, kept in the URL hash so a link or a reload lands on the same view. */
export type Tab = "context" | "stream" | "agent" | "secrets" | "repl";
export const TABS: readonly Tab[] = ["context", "stream", "agent", "secrets", "repl"];

export type Route = { page: "projects" } | { page: "project"; slug: string; tab: Tab; path: string | undefined };

export function parseRoute(hash: string): Route {
  const [where = "", query = ""] = hash.replace(/^#/, "").split("?");
  const parts = where.split("/").filter(Boolean);
  if (parts[0] !== "p" || parts[1] === undefined) return { page: "projects" };
  const tab = TABS.find((name) => name === parts[2]) ?? "context";
  const path = new URLSearchParams(query).get("path") ?? undefined;
  return { page: "project", slug: decodeURIComponent(parts[1]), tab, path };
}

export function routeHref(route: Route): string {
  if (route.page === "projects") return "#/";
  const query = route.path === undefined ? "" : `?${new URLSearchParams({ path: route.path })}`;
  return `#/p/${encodeURIComponent(route.slug)}/${route.tab}${query}`;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

export function navigate(route: Route): void {
  location.hash = routeHref(route);
}
