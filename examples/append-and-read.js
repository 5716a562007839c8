// Append two events to a stream of your own, then read them back in order.
// runtimes: node, cli, browser, run, worker, agent
// expect: {"count":2,"types":["example/note-added","example/note-added"],"texts":["first","second"],"inOrder":true}
async (itx) => {
  // A stream per run, so running the example twice starts from nothing each time.
  const notes = itx.streams.get(`/examples/notes-${crypto.randomUUID()}`);
  await notes.append({ type: "example/note-added", payload: { text: "first" } }, { type: "example/note-added", payload: { text: "second" } });
  const events = await notes.getEvents({});
  return {
    count: events.length,
    types: events.map((event) => event.type),
    texts: events.map((event) => event.payload.text),
    inOrder: events.every((event, index) => index === 0 || event.offset > events[index - 1].offset),
  };
}
