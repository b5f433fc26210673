// The accessibility audit of the browser scenarios (issue 30): axe-core
// run over every route of the web app's router plus a list of states
// (dialogs, forms, open panels) that no address reaches. The routes come
// from the running app's own router, so a screen added to web/src/router.js
// is audited without touching this file — or, when its path has a
// parameter this file has no sample for, the audit fails and says so.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

// AXE_SOURCE is axe-core's browser build, from web/node_modules (a
// devDependency pinned in package.json and the lockfile).
export const AXE_SOURCE = require.resolve('axe-core/axe.min.js')

// FAILING_IMPACTS fail the audit; moderate and minor findings are printed
// as a summary, not failed on.
export const FAILING_IMPACTS = ['serious', 'critical']

// The demo app's tables the samples point at: finds (every field type,
// a lookup), units (stratigraphy, radiocarbon), sites (geodata).
export const SAMPLE_PARAMS = { tb: 'finds', id: '1', rest: 'no/such/page' }

// ROUTE_SAMPLES gives a route more than one address, or other values,
// where one screen has several faces worth auditing; `query` is added to
// that address (the map of a record: its drawing tools).
export const ROUTE_SAMPLES = {
  record: [{ tb: 'finds', id: '1' }, { tb: 'units', id: '1' }],
  matrix: [{ tb: 'units' }],
  'matrix-health': [{ tb: 'units' }],
  map: [{ tb: 'units', query: '?id=1' }],
}

// ROUTE_QUERIES are states of a route kept in its query string.
export const ROUTE_QUERIES = {
  home: ['', '?app={app}', '?app={app}&forgot=1'],
  'reset-password': ['?email=someone%40example.org&token=not-a-token'],
  'oauth-callback': ['?error=access_denied'],
}

// concretePaths turns the router's routes ({ name, path } as
// router.getRoutes() lists them, e.g. '/:app/t/:tb', '/:app/matrix/:tb?',
// '/:rest(.*)*') into addresses to open, one per sample. A route without a
// name (a parent) is skipped: its children are listed themselves. A
// parameter without a sample is an error that names the route.
export function concretePaths(routes, app) {
  const out = []
  const seen = new Set()
  for (const r of routes) {
    if (!r.name) continue
    const samples = ROUTE_SAMPLES[r.name] || [{}]
    for (const { query, ...sample } of samples) {
      const values = { app, ...SAMPLE_PARAMS, ...sample }
      const path = r.path.replace(/:(\w+)(\([^)]*\))?([?*+]?)/g, (_, key, _re, mod) => {
        if (key in sample || (key in values && mod !== '?')) return values[key]
        if (mod === '?' || mod === '*') return ''
        throw new Error(`route ${r.name} (${r.path}): no sample for :${key}; add one to SAMPLE_PARAMS or ROUTE_SAMPLES in web/e2e/a11y.mjs`)
      }).replace(/\/+$/, '') || '/'
      for (const q of query ? [query] : ROUTE_QUERIES[r.name] || ['']) {
        const url = path + q.replaceAll('{app}', app)
        if (seen.has(url)) continue
        seen.add(url)
        out.push({ name: r.name, url })
      }
    }
  }
  return out
}

// runAxe audits the page as it is now (axe is injected by an init script)
// and returns its violations, each with its nodes' targets.
export async function runAxe(page) {
  return page.evaluate(async () => {
    const res = await window.axe.run(document, { resultTypes: ['violations'] })
    return res.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
      nodes: v.nodes.map((n) => ({ target: n.target.join(' '), summary: n.failureSummary })),
    }))
  })
}

// SETTLE_SCRIPT counts the page's requests in flight, so an audit waits
// for a screen's data rather than for a fixed time.
export const SETTLE_SCRIPT = `(() => {
  let n = 0
  const f = window.fetch
  window.fetch = (...a) => { n++; return f(...a).finally(() => { n-- }) }
  const send = XMLHttpRequest.prototype.send
  XMLHttpRequest.prototype.send = function (...a) { n++; this.addEventListener('loadend', () => { n-- }); return send.apply(this, a) }
  window.__strataPending = () => n
})()`

// settle waits until no request has been in flight for two checks in a
// row and two frames have been painted.
export async function settle(page) {
  await page.waitForFunction(() => new Promise((resolve) => {
    let quiet = 0
    const tick = () => {
      quiet = window.__strataPending() === 0 ? quiet + 1 : 0
      if (quiet >= 3) requestAnimationFrame(() => requestAnimationFrame(() => resolve(true)))
      else setTimeout(tick, 30)
    }
    tick()
  }), null, { timeout: 15000 })
}
