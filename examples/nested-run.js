// Run a script from a script: itx.run starts another isolate at the same context.
// runtimes: node, cli, browser, run, worker, agent
// expect: {"product":42}
async (itx) => {
  const product = await itx.run("async () => 6 * 7");
  return { product };
}
