/** The project's homepage: what `http://<slug>.<host>/` answers. */
export function homepage(project: string): string {
  const name = project.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html>
  <head><meta charset="utf-8"><title>${name}</title></head>
  <body>
    <h1>Homepage of ${name}</h1>
    <p>This page is served by worker.ts in the project's config repository, /repos/config. Commit a change to it and this page changes.</p>
  </body>
</html>
`;
}
