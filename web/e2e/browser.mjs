// Launching Debian's Chromium through playwright-core (never a downloaded
// browser): headless, sandbox off (tests run as root in CI), no network
// chatter of its own, a fresh profile each time.
import { chromium } from 'playwright-core'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium'

// serviceWorkers: the scenarios' shared context blocks the app's service
// worker (web/pwa.mjs): each scenario then gets the build's files from the
// server as it is, and page.route sees every request (Playwright does not
// route what a worker fetches). The offline scenarios launch contexts of
// their own with it allowed: they are what tests it.
export async function launch({ serviceWorkers = 'block' } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'strata-chromium-'))
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    viewport: { width: 1280, height: 860 },
    locale: 'en-GB',
    serviceWorkers,
  })
  return { ctx, close: async () => { await ctx.close(); rmSync(profile, { recursive: true, force: true }) } }
}
