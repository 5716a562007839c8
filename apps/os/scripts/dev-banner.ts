// Node-only: what `pnpm dev` prints once the OS answers. The snippet is tested as printed
// (e2e/suites/onboarding.test.ts): it must run pasted into a plain .mjs on Node 22.
import { LOCAL_ADMIN_SECRET } from "./local-os.ts";

export interface DevBannerInput {
  baseUrl: string;
  persistTo: string;
  /** True when ITERATE_ADMIN_SECRET set the admin secret; false for the local default. */
  secretFromEnv: boolean;
}

/**
 * A first script against this OS: plain JavaScript for a `.mjs` file (no `using`, which Node 22
 * does not parse there), and with the local default secret written out when that is the secret,
 * so it works in a shell where ITERATE_ADMIN_SECRET is unset.
 */
export function firstScript({ baseUrl, secretFromEnv }: Pick<DevBannerInput, "baseUrl" | "secretFromEnv">): string {
  const secret = secretFromEnv ? "process.env.ITERATE_ADMIN_SECRET" : JSON.stringify(LOCAL_ADMIN_SECRET);
  return [
    `import { connectItx } from "iterate/client";`,
    `const session = connectItx({ baseUrl: ${JSON.stringify(baseUrl)}, auth: { type: "admin-secret", secret: ${secret} } });`,
    `console.log(await session.__describe());`,
    `session[Symbol.dispose]();`,
  ].join("\n");
}

const indent = (text: string) => text.replace(/^/gm, "  ");

/** The whole banner: where the OS is, how to authenticate, the CLI and a first script. */
export function devBanner(input: DevBannerInput): string {
  const { baseUrl, persistTo, secretFromEnv } = input;
  const secret = secretFromEnv ? "from ITERATE_ADMIN_SECRET" : `"${LOCAL_ADMIN_SECRET}" (the local default; set ITERATE_ADMIN_SECRET to change it)`;
  return `
iterate OS is running at ${baseUrl}   (Cap'n Web at ${baseUrl}/api, state in ${persistTo})
Authenticate with the admin secret ${secret}.

From a shell (the CLI finds a local OS's default secret by itself):

  pnpm exec iterate${baseUrl === "http://127.0.0.1:8787" ? "" : ` --base-url ${baseUrl}`} whoami

From Node 22 (save as hello.mjs in a project that has iterate installed):

${indent(firstScript(input))}

Press Ctrl-C to stop.
`;
}
