// The application's default offline tables (GET /sync/offline-tables, set
// by an admin): every sync keeps them on the device with their filter,
// unless this user removed that default on this device. Removals are
// remembered per device (kv 'defaults:removed'); a mark the user made or
// changed (its own filter) is theirs and the defaults leave it alone; a
// mark the defaults made goes when the admin drops the default.
import { kvGet, kvPut, mark, marks, unmark } from './store.js'

export const REMOVED_KEY = 'defaults:removed'
export const DEFAULTS_KEY = 'defaults:tables'

const same = (a, b) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null)

// planDefaults: what to mark ({tb, filter}) and to unmark (tb) so that the
// device keeps the defaults, given its marks and removals.
export function planDefaults(defaults, current, removed) {
  const byTb = new Map(current.map((m) => [m.tb, m]))
  const gone = new Set(removed || [])
  const wanted = new Set()
  const put = []
  for (const d of defaults || []) {
    wanted.add(d.table)
    if (gone.has(d.table)) continue
    const m = byTb.get(d.table)
    if (m && !m.by_admin) continue // the user's own mark
    if (!m || !same(m.filter, d.filter)) put.push({ tb: d.table, filter: d.filter ?? null })
  }
  const drop = current.filter((m) => m.by_admin && !wanted.has(m.tb)).map((m) => m.tb)
  return { put, drop }
}

// applyDefaults keeps the defaults the server answered on the device.
export async function applyDefaults(app, defaults) {
  await kvPut(app, DEFAULTS_KEY, defaults || [])
  const plan = planDefaults(defaults, await marks(app), await removedDefaults(app))
  for (const p of plan.put) await mark(app, p.tb, p.filter, { byAdmin: true })
  for (const tb of plan.drop) await unmark(app, tb, { byAdmin: true })
}

export async function removedDefaults(app) { return (await kvGet(app, REMOVED_KEY)) || [] }

// defaultTables: the defaults last fetched, table → filter.
export async function defaultTables(app) {
  return new Map(((await kvGet(app, DEFAULTS_KEY)) || []).map((d) => [d.table, d.filter ?? null]))
}

// restoreDefault takes back a default the user had removed on this device.
export async function restoreDefault(app, tb) {
  await kvPut(app, REMOVED_KEY, (await removedDefaults(app)).filter((x) => x !== tb))
  const filter = (await defaultTables(app)).get(tb)
  await mark(app, tb, filter ?? null, { byAdmin: true })
}
