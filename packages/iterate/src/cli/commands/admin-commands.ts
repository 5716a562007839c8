import type { Command } from "commander";
import type { IssuedToken, IssuedTokenAnswer } from "../../types.ts";
import type { CliContext } from "../cli-context.ts";
import { readSecret } from "../io.ts";
import { table } from "../render.ts";
import { UsageError } from "../target.ts";
import { parseInteger } from "./context-commands.ts";

/** `secrets set`, `tokens issue|list|revoke`. */
export function registerAdminCommands(program: Command, ctx: CliContext): void {
  const secrets = program.command("secrets").description("write-only secret material for a project's egress");
  secrets
    .command("set")
    .description("store a secret; its material is read from stdin (asked for without echo on a terminal), never from argv")
    .argument("<path>", "the secret's path, e.g. /secrets/openai")
    .requiredOption("--egress-url <url...>", "URL prefixes the material may be sent to (repeatable)")
    .option("-p, --project <slug>", "the project (default: ITERATE_PROJECT)")
    .action(async (path: string, options: { egressUrl: string[]; project?: string }) => {
      const itx = ctx.context(options.project);
      const material = await readSecret(ctx.io, `material for ${path}: `);
      if (material === "") throw new UsageError("no material on stdin: pipe it in, or type it when asked");
      const answer = (await ctx.step(`storing ${path}`, itx.secrets.get(path).update({ material, egress: { urls: options.egressUrl } }))) as { version: number };
      ctx.print({ path, ...answer }, `stored ${path} (version ${answer.version}); use it as getSecret("${path}") in requests to ${options.egressUrl.join(", ")}`);
    });

  const tokens = program.command("tokens").description("bearer tokens (admin only)");
  tokens
    .command("issue")
    .description("issue a bearer token acting as a principal with exactly the named projects")
    .requiredOption("--principal <id>", "who the token acts as")
    .requiredOption("-p, --project <slug...>", "projects it reaches, ids or slugs (repeatable)")
    .option("--ttl <seconds>", "how long it lives", parseInteger)
    .action(async (options: { principal: string; project: string[]; ttl?: number }) => {
      const input = { principal: options.principal, projectIds: options.project, ...(options.ttl === undefined ? {} : { ttlSeconds: options.ttl }) };
      const answer = (await ctx.step("issuing a token", ctx.session().tokens.issue(input))) as IssuedTokenAnswer;
      // The token is the only line on stdout, so `$(iterate tokens issue ...)` captures it.
      ctx.print(answer, answer.token);
      if (!ctx.json) ctx.io.stderr.write(`token ${answer.tokenId} for ${options.principal}, expires in ${answer.expiresInSeconds} s; shown only now\n`);
    });
  tokens
    .command("list")
    .description("issued tokens (never their text)")
    .action(async () => {
      const list = (await ctx.step("listing tokens", ctx.session().tokens.list())) as IssuedToken[];
      const rows = list.map((t) => [t.tokenId, t.principal, t.projectIds.join(","), new Date(t.expiresAt * 1000).toISOString(), t.revokedAt ? "revoked" : ""]);
      ctx.print(list, table(["TOKEN", "PRINCIPAL", "PROJECTS", "EXPIRES", "STATE"], rows));
    });
  tokens
    .command("revoke")
    .description("revoke a token: its next authenticate fails and its open sessions end")
    .argument("<tokenId>", "the token's id (from `tokens issue` or `tokens list`)")
    .action(async (tokenId: string) => {
      const answer = (await ctx.step("revoking", ctx.session().tokens.revoke(tokenId))) as { revoked: boolean };
      ctx.print({ tokenId, ...answer }, answer.revoked ? `revoked ${tokenId}` : `${tokenId} was not active`);
    });
}
