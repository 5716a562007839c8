// Node-only: where `iterate login` keeps credentials. One JSON file in the user's config folder
// (XDG_CONFIG_HOME, else ~/.config), readable by its owner only.
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Credentials } from "../types.ts";

/** What one profile remembers: an OS and how to authenticate to it. */
export interface Profile {
  baseUrl: string;
  auth: Extract<Credentials, { type: "admin-secret" } | { type: "bearer" }>;
}

interface ProfilesFile {
  profiles: Record<string, Profile>;
}

/** The profile used when neither --profile nor ITERATE_PROFILE names one. */
export const DEFAULT_PROFILE = "default";

/** The folder `iterate` keeps its configuration in. */
export function configDir(env: Record<string, string | undefined>): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && xdg !== "" && xdg.startsWith("/") ? xdg : join(env.HOME || homedir(), ".config");
  return join(base, "iterate");
}

export function profilesPath(env: Record<string, string | undefined>): string {
  return join(configDir(env), "profiles.json");
}

/**
 * Reads every profile. A missing file is no profiles. `warn` hears about a file others may read
 * (it holds secrets), as ssh does about a private key.
 */
export function readProfiles(env: Record<string, string | undefined>, warn: (line: string) => void = () => undefined): Record<string, Profile> {
  const path = profilesPath(env);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw error;
  }
  if ((statSync(path).mode & 0o077) !== 0) warn(`${path} can be read by other users: run \`chmod 600 ${path}\``);
  const parsed = JSON.parse(text) as Partial<ProfilesFile>;
  return typeof parsed.profiles === "object" && parsed.profiles !== null ? parsed.profiles : {};
}

/** Stores `profile` under `name` (replacing it), in a file only its owner can read or write. */
export function writeProfile(env: Record<string, string | undefined>, name: string, profile: Profile | undefined): string {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = profilesPath(env);
  const profiles = readProfiles(env);
  if (profile === undefined) delete profiles[name];
  else profiles[name] = profile;
  // Written aside and renamed: a crash never leaves half a file, and the mode is set before any
  // secret is in it.
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify({ profiles } satisfies ProfilesFile, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
  return path;
}
