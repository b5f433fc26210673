import { defineConfig } from 'vite'
import vue from '@vitejs/plugin-vue'
import { fileURLToPath } from 'node:url'

// The build goes into core/webui/dist, which is committed and embedded in
// the binary (go:embed): `make run` needs no npm. Assets are served under
// /static/ with content hashes in their names, so they can be cached for a
// year; index.html is answered for every page route. Nothing in the build
// depends on the time or the machine, so the same sources give the same
// bytes (.ci/run checks the committed folder against a fresh build).
export default defineConfig({
  base: '/static/',
  plugins: [vue()],
  build: {
    outDir: fileURLToPath(new URL('../core/webui/dist', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    reportCompressedSize: false,
    // No inline modulepreload polyfill script: the CSP allows no inline script.
    modulePreload: { polyfill: false },
  },
  server: {
    // `npm run dev` against a running `make run` on :8080.
    proxy: { '^/(api|[a-z][a-z0-9_]+/api)/': 'http://127.0.0.1:8080' },
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.js'],
  },
})
