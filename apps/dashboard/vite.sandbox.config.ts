import { defineConfig } from "vite";

// The REPL's sandbox script (/repl-sandbox.js), built after the app into the same folder. A
// classic script, not a module: the sandboxed iframe has an opaque origin, so a module script
// (always fetched in CORS mode) from the OS's own origin would need CORS headers on our assets;
// a classic script loads without them. Its page is public/repl-sandbox.html (decision 0020).
export default defineConfig({
  publicDir: false,
  build: {
    outDir: "dist",
    emptyOutDir: false,
    sourcemap: false,
    target: "es2022",
    lib: { entry: "src/sandbox/repl-sandbox.ts", formats: ["iife"], name: "iterateReplSandbox", fileName: () => "repl-sandbox.js" },
  },
  logLevel: "warn",
});
