// The service worker of the installable, offline web app (issue 32),
// generated after the build by Workbox's own generator (workbox-build,
// generateSW): it precaches every file of the build — the app shell, the
// hashed assets including the screens loaded on demand, the icons and the
// manifest — and answers every page navigation with the precached
// index.html, so a reload without a network still opens the app. API
// calls are not touched: the app keeps its data in IndexedDB (src/lib/
// offline), never in the worker's caches.
//
// Why workbox-build and not vite-plugin-pwa: the plugin wraps this same
// generator but owns the manifest, the registration script and the output
// names, and lags behind Vite majors (this build is on Vite 8); called
// directly, the worker lands at dist/sw.js under /static/ where core/webui
// serves it (with Service-Worker-Allowed: / so its scope is the whole
// site), the navigation entry is the server's "/" page and the rest of
// the build keeps its reproducible bytes.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { generateSW } from 'workbox-build'

export function serviceWorker() {
  let outDir
  return {
    name: 'strata-service-worker',
    apply: 'build',
    configResolved(cfg) { outDir = cfg.build.outDir },
    async closeBundle() {
      const index = readFileSync(join(outDir, 'index.html'))
      const { warnings } = await generateSW({
        globDirectory: outDir,
        globPatterns: ['**/*.{js,css,svg,png,json,webmanifest}'],
        globIgnores: ['sw.js', '**/*.br', '**/*.gz'],
        modifyURLPrefix: { '': '/static/' },
        // The pages' one document: "/" answers index.html (core/webui).
        additionalManifestEntries: [{ url: '/', revision: createHash('sha256').update(index).digest('hex').slice(0, 16) }],
        navigateFallback: '/',
        // API paths are never pages; /static/ files are precached by name.
        // An application's published data (/<app>/data…, its landing and
        // record pages and downloads) and its OAI-PMH endpoint are pages
        // the server makes (core/publish), not the app's: issue 34.
        navigateFallbackDenylist: [/^\/api\//, /^\/[^/]+\/api\//, /^\/static\//, /^\/[^/]+\/(data|oai)(\/|\?|$)/],
        // Hashed names change with their content: no cache-busting query.
        dontCacheBustURLsMatching: /^\/static\/assets\//,
        maximumFileSizeToCacheInBytes: 4 * 1024 * 1024,
        swDest: join(outDir, 'sw.js'),
        inlineWorkboxRuntime: true,
        mode: 'production',
        sourcemap: false,
        // A new release takes over at once: the precache is replaced in
        // one step, and outdated caches are dropped.
        skipWaiting: true,
        clientsClaim: true,
        cleanupOutdatedCaches: true,
      })
      for (const w of warnings) this.warn(w)
    },
  }
}
