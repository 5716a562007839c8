import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * How many file descriptors the local OS's workerd processes hold, summed: every process with a
 * file open under `stateDir` (the OS's and its runner's). Linux only (`/proc`); 0 elsewhere.
 */
export function openFilesOf(stateDir: string): { processes: number; descriptors: number } {
  let processes = 0;
  let descriptors = 0;
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return { processes, descriptors };
  }
  for (const pid of pids) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("workerd")) continue;
      const fds = readdirSync(`/proc/${pid}/fd`);
      const ours = fds.some((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(stateDir);
        } catch {
          return false;
        }
      });
      if (!ours) continue;
      processes++;
      descriptors += fds.length;
    } catch {
      // The process ended while we looked.
    }
  }
  return { processes, descriptors };
}
