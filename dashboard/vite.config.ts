import { defineConfig } from 'vite'
import { fileURLToPath } from 'node:url'

// The dashboard is served by the gateway under /dashboard/ from dashboard/dist (see gateway/static_files.ts).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
    modulePreload: { polyfill: false }
  }
})
