import { RpcTarget } from "cloudflare:workers";
import { relay } from "../api/relay.ts";
import { unwrapCoded } from "../api/coded-result.ts";
import type { SecretDescription, SecretDurableObject } from "./secret-durable-object.ts";
import { parseSecretPath } from "./secret-path.ts";

interface SecretScope {
  env: Env;
  projectId: () => Promise<string>;
  principal: string;
  origin: string;
}

/** `itx.secrets`: the project's secrets by path. */
export class SecretsRpcTarget extends RpcTarget {
  readonly #scope: SecretScope;

  constructor(scope: SecretScope) {
    super();
    this.#scope = scope;
  }

  get(path: unknown): SecretRpcTarget {
    return new SecretRpcTarget(this.#scope, parseSecretPath(path));
  }
}

/**
 * One secret. Material goes in through `update` and never comes out: `__describe` answers its
 * metadata and how often it was used. Requests reference it as `getSecret("/secrets/<name>")`.
 */
export class SecretRpcTarget extends RpcTarget {
  readonly #scope: SecretScope;
  readonly #path: string;

  constructor(scope: SecretScope, path: string) {
    super();
    this.#scope = scope;
    this.#path = path;
  }

  /** Stores material (encrypted) and the URLs it may be sent to. */
  async update(input: unknown): Promise<{ version: number }> {
    return unwrapCoded(await relay((await this.#stub()).update(input, { principal: this.#scope.principal, origin: this.#scope.origin })));
  }

  async __describe(): Promise<SecretDescription & { kind: "secret"; instructions: string; children: Record<string, string>; placeholder: string }> {
    const description = await relay((await this.#stub()).describe());
    return {
      kind: "secret" as const,
      children: {
        update: "update({ material, egress: { urls } }): stores material (write-only) and the URLs it may be sent to",
      },
      instructions: `Write-only. Put ${placeholderFor(this.#path)} in a header of itx.fetch (or a script's fetch); it is replaced only there, only for allowed URLs. Bodies are sent as written.`,
      placeholder: placeholderFor(this.#path),
      ...description,
    };
  }

  async #stub(): Promise<Pick<SecretDurableObject, "update" | "describe">> {
    const projectId = await this.#scope.projectId();
    return this.#scope.env.SECRET.getByName(`${projectId}:${this.#path}`) as unknown as Pick<SecretDurableObject, "update" | "describe">;
  }
}

function placeholderFor(path: string): string {
  return `getSecret("${path}")`;
}
