// Ask a context what it offers: __describe() lists its members and capabilities.
// runtimes: node, cli, browser, run, worker, agent
// expect: {"kind":"itx","offersStreams":true,"offersRun":true}
async (itx) => {
  const description = await itx.__describe();
  const members = Object.keys(description.children ?? {});
  return { kind: description.kind, offersStreams: members.includes("streams"), offersRun: members.includes("run") };
}
