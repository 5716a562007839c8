// Who and where a script is: the context it runs at.
// runtimes: node, cli, browser, run, worker
// (not agent: an agent's script runs at its own context, /agents/<name>)
// expect: {"path":"/","hasProject":true}
async (itx) => {
  const me = await itx.whoami();
  return { path: me.path, hasProject: me.projectId.length > 0 };
}
