import { DurableObject } from "cloudflare:workers";
import { ItxError } from "iterate/errors";
import { asCoded, type Coded } from "../api/coded-result.ts";
import { streamStub } from "../stream/stream-rpc-target.ts";
import { coordinateOfObject } from "../stream/coordinate.ts";
import { decryptMaterial, encryptMaterial, secretsRootKey } from "./secret-crypto.ts";
import { parseSecretUpdate, urlAllowed } from "./secret-path.ts";

export const SECRET_SET = "events.iterate.com/secret/set";
export const SECRET_USED = "events.iterate.com/secret/used";

/** What describe answers: never material. */
export interface SecretDescription {
  path: string;
  set: boolean;
  version: number;
  egress: { urls: string[] };
  updatedAt: string | null;
  uses: number;
}

interface Row extends Record<string, SqlStorageValue> {
  version: number;
  iv: ArrayBuffer;
  ciphertext: ArrayBuffer;
  urls: string;
  updated_at: string;
  uses: number;
}

/**
 * One secret, named `<projectId>:<path>`. Material is write-only: it is stored encrypted here and
 * leaves only through `use`, which the egress pipe calls for a request whose URL is on the
 * allowlist. Facts about the secret (set, used) go to its stream without material.
 */
export class SecretDurableObject extends DurableObject<Env> {
  readonly #projectId: string;
  readonly #path: string;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ({ projectId: this.#projectId, path: this.#path } = coordinateOfObject(ctx.id, "a secret"));
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS secret(
      id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL, iv BLOB NOT NULL, ciphertext BLOB NOT NULL,
      urls TEXT NOT NULL, updated_at TEXT NOT NULL, uses INTEGER NOT NULL)`);
  }

  /** Stores material; a refusal (bad input, no root key) is answered as a value (see coded-result.ts). */
  update(input: unknown, stamp: { principal: string; origin: string }): Promise<Coded<{ version: number }>> {
    return asCoded(() => this.#update(input, stamp));
  }

  async #update(input: unknown, stamp: { principal: string; origin: string }): Promise<{ version: number }> {
    const { material, urls } = parseSecretUpdate(input);
    const { iv, ciphertext } = await encryptMaterial(this.#rootKey(), this.ctx.id.name ?? "", material);
    const version = (this.#row()?.version ?? 0) + 1;
    const updatedAt = new Date().toISOString();
    this.ctx.storage.sql.exec(
      `INSERT INTO secret(id, version, iv, ciphertext, urls, updated_at, uses) VALUES (1, ?, ?, ?, ?, ?, 0)
       ON CONFLICT(id) DO UPDATE SET version = excluded.version, iv = excluded.iv, ciphertext = excluded.ciphertext,
         urls = excluded.urls, updated_at = excluded.updated_at`,
      version,
      iv,
      ciphertext,
      JSON.stringify(urls),
      updatedAt,
    );
    await this.#stream().append({ events: [{ type: SECRET_SET, payload: { path: this.#path, version, egress: { urls } } }], stamp: { ...stamp, platform: "secret" } });
    return { version };
  }

  describe(): SecretDescription {
    const row = this.#row();
    return {
      path: this.#path,
      set: row !== undefined,
      version: row?.version ?? 0,
      egress: { urls: row ? (JSON.parse(row.urls) as string[]) : [] },
      updatedAt: row?.updated_at ?? null,
      uses: row?.uses ?? 0,
    };
  }

  /**
   * The material, for the egress pipe's terminal step only, when `url` is on the allowlist. Each
   * use is counted and recorded as `secret/used`. A refusal is answered as a value.
   */
  use(input: { url: string; origin: string; principal: string }): Promise<Coded<string>> {
    return asCoded(() => this.#use(input));
  }

  async #use(input: { url: string; origin: string; principal: string }): Promise<string> {
    const row = this.#row();
    const url = new URL(input.url);
    if (!row) throw new ItxError("EGRESS_REFUSED", `secret ${this.#path} has no material; the request was not sent`);
    if (!urlAllowed(url, JSON.parse(row.urls) as string[])) {
      throw new ItxError("EGRESS_REFUSED", `secret ${this.#path} may not be sent to ${url.origin}; the request was not sent`, {
        details: { secret: this.#path, origin: url.origin },
      });
    }
    const material = await decryptMaterial(this.#rootKey(), this.ctx.id.name ?? "", new Uint8Array(row.iv), new Uint8Array(row.ciphertext));
    this.ctx.storage.sql.exec("UPDATE secret SET uses = uses + 1 WHERE id = 1");
    await this.#stream().append({
      events: [{ type: SECRET_USED, payload: { path: this.#path, version: row.version, url: `${url.origin}${url.pathname}` } }],
      stamp: { principal: input.principal, origin: input.origin, platform: "secret" },
    });
    return material;
  }

  #row(): Row | undefined {
    return this.ctx.storage.sql.exec<Row>("SELECT * FROM secret WHERE id = 1").toArray()[0];
  }

  #rootKey(): string {
    return secretsRootKey(this.env);
  }

  #stream() {
    return streamStub(this.env.STREAM, `${this.#projectId}:${this.#path}`);
  }
}
