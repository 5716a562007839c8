// Make a child context and act there: its own stream, its parent's capabilities.
// runtimes: node, cli, browser, run, worker
// (not agent: a child of an agent's context lives under /agents/<name>)
// expect: {"path":"/itx/example-child","sawOwnEvent":true}
async (itx) => {
  const child = itx.extend({ name: "example-child" });
  const me = await child.whoami();
  const [event] = await child.append({ type: "example/child-touched", payload: { at: me.path } });
  const mine = await child.getEvents({ afterOffset: event.offset - 1 });
  return { path: me.path, sawOwnEvent: mine.some((candidate) => candidate.type === "example/child-touched") };
}
