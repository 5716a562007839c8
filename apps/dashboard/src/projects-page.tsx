import { useState, type FormEvent } from "react";
import { useItx } from "iterate/react";
import type { ProjectSummary } from "iterate/types";
import { ErrorLine } from "./error-line.tsx";
import { routeHref } from "./route.ts";
import { useCall } from "./use-call.ts";

export function ProjectsPage() {
  const session = useItx();
  const projects = useCall<ProjectSummary[]>(() => session.projects.list(), [session]);
  const [slug, setSlug] = useState("");
  const [failure, setFailure] = useState<unknown>(undefined);
  const create = async (event: FormEvent) => {
    event.preventDefault();
    setFailure(undefined);
    try {
      await session.projects.create({ slug }).whoami();
      setSlug("");
      projects.reload();
    } catch (error) {
      setFailure(error);
    }
  };
  return (
    <section>
      <h2>Projects</h2>
      <ErrorLine error={projects.error} />
      <ul className="list" data-testid="projects">
        {(projects.data ?? []).map((project) => (
          <li key={project.id}>
            <a href={routeHref({ page: "project", slug: project.slug, tab: "context", path: undefined })}>{project.slug}</a>
            <span className="muted"> {project.id}</span>
          </li>
        ))}
        {projects.data?.length === 0 && <li className="muted">No projects yet.</li>}
      </ul>
      <form className="row" onSubmit={(event) => void create(event)}>
        <input name="slug" placeholder="new-project-slug" value={slug} onChange={(event) => setSlug(event.target.value)} />
        <button type="submit" disabled={slug === ""}>
          Create project
        </button>
      </form>
      <ErrorLine error={failure} />
    </section>
  );
}
