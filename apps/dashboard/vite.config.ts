import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// Static assets the OS Worker serves at / (wrangler.jsonc `assets`). Everything is bundled:
// no CDN at run time. The OS builds this before it starts (apps/os/scripts/dashboard-assets.ts).
export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, target: "es2022" },
  logLevel: "warn",
});
