// Wait for an event: the script appends a request and waits for the answer after it.
// runtimes: node, cli, browser, run, worker, agent
// expect: {"answered":"pong"}
async (itx) => {
  const stream = itx.streams.get(`/examples/ping-${crypto.randomUUID()}`);
  const [ping] = await stream.append({ type: "example/ping-sent", payload: {} });
  await stream.append({ type: "example/pong-sent", payload: { word: "pong" } });
  const pong = await stream.waitForEvent({ type: "example/pong-sent", afterOffset: ping.offset, timeoutMs: 10000 });
  return { answered: pong.payload.word };
}
