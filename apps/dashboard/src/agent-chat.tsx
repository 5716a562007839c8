import { useState, type FormEvent } from "react";
import { useAgent, type ConversationEntry } from "iterate/react";
import type { AgentConfig } from "iterate/types";
import { ErrorLine } from "./error-line.tsx";
import { PathBar } from "./path-bar.tsx";
import { navigate, type Route } from "./route.ts";

/** Chat with one agent: its conversation, the reply streaming in, the scripts it runs and their results. */
export function AgentChat({ route }: { route: Route & { page: "project" } }) {
  const path = route.path ?? "/agents/assistant";
  const agent = useAgent(path);
  const [message, setMessage] = useState("");
  const [failure, setFailure] = useState<unknown>(undefined);
  const send = async (event: FormEvent) => {
    event.preventDefault();
    setFailure(undefined);
    try {
      await agent.send(message);
      setMessage("");
    } catch (error) {
      setFailure(error);
    }
  };
  return (
    <section className="chat">
      <PathBar label="Agent" value={path} onGo={(next) => navigate({ ...route, tab: "agent", path: next })} />
      <CreateAgent create={agent.create} />
      <ErrorLine error={agent.error} />
      <ol className="conversation" data-testid="conversation">
        {agent.entries.map((entry) => (
          <Entry key={`${entry.offset}:${entry.kind}`} entry={entry} />
        ))}
        {agent.thinking && (
          <li className="entry streaming" data-testid="streaming">
            <pre>{agent.streaming === "" || agent.streaming === null ? "…" : agent.streaming}</pre>
          </li>
        )}
      </ol>
      <form className="row" onSubmit={(event) => void send(event)}>
        <input name="message" className="grow" placeholder="Message the agent" value={message} onChange={(event) => setMessage(event.target.value)} />
        <button type="submit" disabled={message === ""}>
          Send
        </button>
      </form>
      <ErrorLine error={failure} />
    </section>
  );
}

function Entry({ entry }: { entry: ConversationEntry }) {
  switch (entry.kind) {
    case "user":
      return <li className="entry user" data-kind="user">{entry.text}</li>;
    case "agent":
      return <li className="entry agent" data-kind="agent">{entry.text}</li>;
    case "script":
      return (
        <li className="entry script" data-kind="script">
          <pre>{entry.script}</pre>
        </li>
      );
    case "result":
      return (
        <li className={`entry result ${entry.status}`} data-kind="result">
          <pre>{entry.text}</pre>
        </li>
      );
    case "stopped":
      return <li className="entry stopped muted" data-kind="stopped">{entry.reason}</li>;
  }
}

/** Get-or-create the agent, optionally on an OpenAI-compatible model (the key is a secret's path). */
function CreateAgent({ create }: { create(config?: AgentConfig): Promise<void> }) {
  const [baseUrl, setBaseUrl] = useState("");
  const [model, setModel] = useState("");
  const [apiKey, setApiKey] = useState("");
  const [state, setState] = useState<{ done?: boolean; error?: unknown }>({});
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const llm = baseUrl === "" ? undefined : { provider: "openai-compatible" as const, baseUrl, model, ...(apiKey === "" ? {} : { apiKey }) };
    try {
      await create(llm ? { llm } : undefined);
      setState({ done: true });
    } catch (error) {
      setState({ error });
    }
  };
  return (
    <details className="create-agent">
      <summary className="muted small">Create this agent</summary>
      <form className="row" onSubmit={(event) => void submit(event)}>
        <input name="baseUrl" placeholder="model base URL (blank: the OS default)" value={baseUrl} onChange={(event) => setBaseUrl(event.target.value)} />
        <input name="model" placeholder="model" value={model} onChange={(event) => setModel(event.target.value)} />
        <input name="apiKey" placeholder="key secret path, e.g. /secrets/openai" value={apiKey} onChange={(event) => setApiKey(event.target.value)} />
        <button type="submit">Create</button>
        {state.done === true && <span className="muted small" data-testid="agent-created">ready</span>}
      </form>
      <ErrorLine error={state.error} />
    </details>
  );
}
