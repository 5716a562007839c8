import type { TestProject } from "vitest/node";
import { startLocalOs, type LocalOs } from "../../apps/os/scripts/local-os.ts";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    adminSecret: string;
  }
}

let os: LocalOs | undefined;

export async function setup(project: TestProject): Promise<void> {
  const given = process.env.BASE_URL;
  if (given !== undefined && given !== "") {
    const adminSecret = process.env.ITERATE_ADMIN_SECRET;
    if (!adminSecret) throw new Error("BASE_URL is set: set ITERATE_ADMIN_SECRET to that OS's admin secret too");
    project.provide("baseUrl", given.replace(/\/+$/, ""));
    project.provide("adminSecret", adminSecret);
    return;
  }
  os = await startLocalOs();
  project.provide("baseUrl", os.baseUrl);
  project.provide("adminSecret", os.adminSecret);
}

export async function teardown(): Promise<void> {
  await os?.stop();
}
