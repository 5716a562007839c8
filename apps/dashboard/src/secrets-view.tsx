import { useState } from "react";
import { useItx } from "iterate/react";
import { ErrorLine } from "./error-line.tsx";
import { PathBar } from "./path-bar.tsx";
import { ObjectTree } from "./object-tree.tsx";

/** A secret's metadata (placeholder, version, instructions). Material never comes out of the OS. */
export function SecretsView() {
  const itx = useItx();
  const [described, setDescribed] = useState<{ value?: unknown; error?: unknown }>({});
  const open = (path: string) => {
    Promise.resolve(itx.secrets.get(path).__describe()).then(
      (value: unknown) => setDescribed({ value }),
      (error: unknown) => setDescribed({ error }),
    );
  };
  return (
    <section>
      <p className="muted">Secrets are write-only: this shows what the OS knows about one, never its material.</p>
      <PathBar label="Secret" value="/secrets/" onGo={open} />
      <ErrorLine error={described.error} />
      {described.value !== undefined && <ObjectTree value={described.value} />}
    </section>
  );
}
