// Compiles src/ to dist/ (JavaScript + declarations) for the packed tarball. Inside the workspace
// the package exports its TypeScript source; `publishConfig.exports` points the tarball at dist/.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
rmSync(join(packageDir, "dist"), { recursive: true, force: true });
const tsc = join(dirname(createRequire(join(packageDir, "package.json")).resolve("typescript/package.json")), "bin", "tsc");
// Two programs: most of the SDK runs in Node and browsers; src/sdk runs inside workerd.
for (const project of ["tsconfig.build.json", "src/sdk/tsconfig.build.json"]) {
  execFileSync(process.execPath, [tsc, "-p", join(packageDir, project)], { stdio: "inherit", cwd: packageDir });
}
