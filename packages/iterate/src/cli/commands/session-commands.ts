import type { Command } from "commander";
import { connectItx } from "../../client/connect-itx.ts";
import type { Principal, ProjectSummary } from "../../types.ts";
import type { CliContext } from "../cli-context.ts";
import { readSecret } from "../io.ts";
import { DEFAULT_PROFILE, readProfiles, writeProfile, type Profile } from "../profiles.ts";
import { table } from "../render.ts";
import { DEFAULT_BASE_URL, normalizeBaseUrl, UsageError, type GlobalOptions } from "../target.ts";

/** `login`, `logout`, `whoami`, `projects list|create`. */
export function registerSessionCommands(program: Command, ctx: CliContext): void {
  program
    .command("login")
    .description("check credentials against an OS and keep them in a profile (the secret comes from stdin, never argv)")
    .option("--token", "the material is a bearer token (default: the admin secret)")
    .action(async (options: { token?: boolean }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const env = ctx.io.env;
      const profile = globals.profile ?? (env.ITERATE_PROFILE || DEFAULT_PROFILE);
      const existing = readProfiles(env)[profile];
      const baseUrl = normalizeBaseUrl(globals.baseUrl ?? (env.ITERATE_BASE_URL || existing?.baseUrl || DEFAULT_BASE_URL));
      ctx.useTarget({ baseUrl, profile, authSource: "stdin" });
      const material = await readSecret(ctx.io, options.token ? "bearer token: " : `admin secret for ${baseUrl}: `);
      if (material === "") throw new UsageError("no secret on stdin: pipe it in (`iterate login < file`) or type it when asked");
      const auth: Profile["auth"] = options.token ? { type: "bearer", token: material } : { type: "admin-secret", secret: material };
      // No `using`: the workspace runs this file as is, and Node 22 does not parse it.
      const session = connectItx({ baseUrl, auth });
      let principal: Principal;
      try {
        ({ principal } = (await ctx.step(`checking the credentials with ${baseUrl}`, session.__describe())) as { principal: Principal });
      } finally {
        session[Symbol.dispose]();
      }
      const path = writeProfile(env, profile, { baseUrl, auth });
      ctx.print({ profile, baseUrl, principal, path }, `logged in to ${baseUrl} as ${principal.id} (profile ${profile}, kept in ${path})`);
    });

  program
    .command("logout")
    .description("forget a profile's credentials")
    .action((_options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const profile = globals.profile ?? (ctx.io.env.ITERATE_PROFILE || DEFAULT_PROFILE);
      const known = readProfiles(ctx.io.env)[profile] !== undefined;
      if (known) writeProfile(ctx.io.env, profile, undefined);
      ctx.print({ profile, removed: known }, known ? `forgot profile ${profile}` : `no profile ${profile}`);
    });

  program
    .command("whoami")
    .description("who the credentials act as, on which OS")
    .action(async () => {
      const { principal } = (await ctx.step("authenticating", ctx.session().__describe())) as { principal: Principal };
      const { baseUrl, profile, authSource } = ctx.target;
      ctx.print({ principal, baseUrl, profile, credentials: authSource }, `${principal.id} (${principal.kind}) at ${baseUrl}, credentials from ${authSource}`);
    });

  const projects = program.command("projects").description("the projects these credentials reach");
  projects
    .command("list")
    .description("list projects")
    .action(async () => {
      const list = (await ctx.step("listing projects", ctx.session().projects.list())) as ProjectSummary[];
      ctx.print(list, list.length === 0 ? "no projects yet: `iterate projects create <slug>`" : table(["SLUG", "ID"], list.map((p) => [p.slug, p.id])));
    });
  projects
    .command("create")
    .description("create a project (slug: lowercase kebab-case, 2-63 characters)")
    .argument("<slug>", "the new project's slug")
    .action(async (slug: string) => {
      const { projectId } = (await ctx.step(`creating ${slug}`, ctx.session().projects.create({ slug }).whoami())) as { projectId: string };
      ctx.print({ id: projectId, slug }, `created ${slug} (${projectId})`);
    });
}
