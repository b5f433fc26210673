import { defineConfig } from 'vite'
import vue from '@vitejs/plugin-vue'
import { fileURLToPath } from 'node:url'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync, brotliCompressSync, constants as zlib } from 'node:zlib'
import { basemap } from './basemap.mjs'
import { serviceWorker } from './pwa.mjs'

// precompress writes a .br and a .gz beside every text file of the build
// big enough to gain (1 KiB and over, and only when the result is smaller),
// so the server sends them by Accept-Encoding without compressing at each
// request (core/webui). Node's own zlib does both at their best levels:
// no dependency, and the same input gives the same bytes (gzip's header
// carries no time here), which keeps the committed build reproducible.
function precompress() {
  let outDir
  return {
    name: 'strata-precompress',
    apply: 'build',
    configResolved(cfg) { outDir = cfg.build.outDir },
    writeBundle(_opts, bundle) {
      for (const [name, item] of Object.entries(bundle)) {
        if (!/\.(js|css|html|svg|json)$/.test(name)) continue
        const src = Buffer.from(item.type === 'chunk' ? item.code : item.source)
        if (src.length < 1024) continue
        const br = brotliCompressSync(src, { params: {
          [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY,
          [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
          [zlib.BROTLI_PARAM_SIZE_HINT]: src.length,
        } })
        const gz = gzipSync(src, { level: zlib.Z_BEST_COMPRESSION })
        if (br.length < src.length) writeFileSync(join(outDir, name + '.br'), br)
        if (gz.length < src.length) writeFileSync(join(outDir, name + '.gz'), gz)
      }
    },
  }
}

// The build goes into core/webui/dist, which is committed and embedded in
// the binary (go:embed): `make run` needs no npm. Assets are served under
// /static/ with content hashes in their names, so they can be cached for a
// year; index.html is answered for every page route. Nothing in the build
// depends on the time or the machine, so the same sources give the same
// bytes (.ci/run checks the committed folder against a fresh build).
export default defineConfig({
  base: '/static/',
  plugins: [vue(), basemap(), precompress(), serviceWorker()],
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
