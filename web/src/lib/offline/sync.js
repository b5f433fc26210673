// Sending and fetching (issue 32, the wire in docs/sync.md): on
// reconnect, at start and on demand the device pushes its queue
// (POST /sync/push, 500 at most a batch, seq numbered per device with no
// gap), then uploads its photos (POST/PUT /sync/uploads, resumable), then
// pulls every table it keeps (GET /sync/{tb}, the checkpoint loop).
// One run at a time per app; progress in syncState.
import { reactive } from 'vue'
import { api } from '../api.js'
import { db, deviceId, rowKey } from './db.js'
import { applyPull, counts, kvGet, kvPut, marks, refreshCounts } from './store.js'
import { applyDefaults } from './defaults.js'
import { wireRS } from './relations.js'

export const BATCH = 500
export const PULL_LIMIT = 500
export const CHUNK = 256 * 1024

// net: the browser's own idea of the network, and failures seen since.
export const net = reactive({ online: typeof navigator === 'undefined' ? true : navigator.onLine })

// syncState[app] = {running, phase: 'push'|'upload'|'pull'|'', done, total, error, last, conflicts}
export const syncState = reactive({})
// stateOf returns the reactive state (read back through syncState: the
// object assigned is the raw one, which no screen would follow).
function stateOf(app) {
  if (!syncState[app]) syncState[app] = { running: false, phase: '', done: 0, total: 0, error: null, last: null, conflicts: 0, refused: [] }
  return syncState[app]
}

export function isOffline() { return !net.online }

// The queue's temp ids in a mutation's values: {"temp_id": "tmp-..."}.
function wireSet(m) {
  const set = {}
  for (const [k, v] of Object.entries(m.set || {})) {
    set[k] = (m.refs || []).includes(k) && typeof v === 'string' && v.startsWith('tmp-') ? { temp_id: v } : v
  }
  return set
}

async function nextSeqs(d, device, n) {
  const key = 'seq:' + device
  const cur = (await d.kv.get(key))?.value || 0
  await d.kv.put({ key, value: cur + n, at: Date.now() })
  return cur + 1
}

async function push(app, st) {
  const d = db(app)
  const client = api(app)
  const device = deviceId(app)
  for (;;) {
    const batch = (await d.queue.orderBy('n').toArray()).filter((m) => m.state !== 'refused').slice(0, BATCH)
    if (!batch.length) return
    // Numbers are given once, in queue order, and kept: a batch resent
    // after a lost answer carries the same seq and mutation_id.
    const fresh = batch.filter((m) => !m.seq)
    if (fresh.length) {
      await d.transaction('rw', d.queue, d.kv, async () => {
        let s = await nextSeqs(d, device, fresh.length)
        for (const m of fresh) { m.seq = s++; m.state = 'sent'; await d.queue.put(m) }
      })
    }
    st.phase = 'push'
    st.total = batch.length
    st.done = 0
    const body = {
      mutations: batch.map((m) => {
        if (m.rs) return { mutation_id: m.mutation_id, device_id: device, seq: m.seq, table: m.table, rs: wireRS(m.rs) }
        const w = { mutation_id: m.mutation_id, device_id: device, seq: m.seq, table: m.table, set: wireSet(m) }
        if (m.temp_id) w.temp_id = m.temp_id
        else w.id = m.id
        if (m.base_version != null) w.base_version = m.base_version
        if (m.delete) w.delete = true
        return w
      }),
    }
    const res = await client.post('/sync/push', body)
    const temps = { ...((await kvGet(app, 'tempids')) || {}), ...(res.temp_ids || {}) }
    await kvPut(app, 'tempids', temps)
    const byId = new Map((res.results || []).map((r) => [r.mutation_id, r]))
    await d.transaction('rw', d.queue, d.rows, async () => {
      for (const m of batch) {
        const r = byId.get(m.mutation_id)
        if (!r) continue
        st.done++
        if (r.status === 'refused') {
          await d.queue.update(m.n, { state: 'refused', result: { code: r.code, message: r.message, fields: r.fields } })
          st.refused.push({ table: m.table, id: m.id ?? m.temp_id ?? m.rec, code: r.code, message: r.message })
          continue
        }
        if (r.status === 'conflict') st.conflicts += (r.conflicts || []).length || 1
        await d.queue.delete(m.n)
        // The row takes the values sent, and the real id of a record
        // created here, until the pull brings the server's.
        const row = await d.rows.get(m.k)
        if (!row) continue
        if (m.delete) { await d.rows.delete(m.k); continue }
        const real = r.id ?? temps[m.temp_id]
        const values = { ...row.values, ...m.set }
        for (const f of m.refs || []) if (temps[values[f]]) values[f] = temps[values[f]]
        const next = { ...row, values, version: r.version ?? row.version }
        if (m.temp_id && real != null && !(await d.queue.where('k').equals(m.k).count())) {
          await d.rows.delete(m.k)
          await d.rows.put({ ...next, k: rowKey(m.table, real), id: real, temp: false })
        } else await d.rows.put(next)
      }
    })
    // Photos of records created here follow them to their real ids.
    await d.transaction('rw', d.uploads, async () => {
      for (const u of await d.uploads.toArray()) {
        const real = u.temp_id && temps[u.temp_id]
        if (real != null) await d.uploads.put({ ...u, id: real, temp_id: undefined, k: rowKey(u.table, real) })
      }
    })
    if (byId.size < batch.length) return // an answer short of results: try again later
  }
}

// sha256 of a photo, which the server checks the bytes against (none
// without WebCrypto: pages over plain http).
async function sha256(blob) {
  if (!globalThis.crypto?.subtle || !blob.arrayBuffer) return null
  const sum = await crypto.subtle.digest('SHA-256', await blob.arrayBuffer())
  return [...new Uint8Array(sum)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

async function uploads(app, st) {
  const d = db(app)
  const client = api(app)
  // in the order they were added; a failed one waits for the user (Offline page)
  const list = (await d.uploads.toArray()).filter((u) => u.state !== 'failed').sort((a, b) => a.at - b.at)
  if (!list.length) return
  st.phase = 'upload'
  st.total = list.reduce((n, u) => n + u.size, 0)
  st.done = 0
  for (const u of list) {
    const body = { upload_id: u.upload_id, device_id: deviceId(app), filename: u.filename, size: u.size, table: u.table, description: u.description || undefined }
    if (u.temp_id) body.temp_id = u.temp_id
    else body.id = u.id
    // The upload's state is in "upload" (the envelope's status is the request's).
    const state = (r) => r.upload || r
    const digest = await sha256(u.blob)
    if (digest) body.sha256 = digest
    let at = state(await client.post('/sync/uploads', body))
    let offset = at.offset || 0
    while (offset < u.size && at.status === 'receiving') {
      const bytes = u.blob.slice(offset, Math.min(u.size, offset + CHUNK))
      try {
        at = state(await client.call('PUT', `/sync/uploads/${u.upload_id}`, { body: bytes, headers: { 'Upload-Offset': String(offset) } }))
        offset = at.offset
      } catch (e) {
        if (e.code !== 'upload_offset_mismatch' || typeof e.body?.offset !== 'number') throw e
        offset = e.body.offset // the server has more (or less) than we thought: go on from there
      }
      await d.uploads.update(u.upload_id, { offset })
      st.done += bytes.size
    }
    if (at.status === 'waiting_for_record') at = state(await client.get(`/sync/uploads/${u.upload_id}`))
    if (at.status === 'linked') await d.uploads.delete(u.upload_id)
    else if (at.status === 'failed') await d.uploads.update(u.upload_id, { state: 'failed', code: at.code })
  }
}

// cacheSchema keeps what the screens of tb need offline: the record
// template (schema), the list's fields, the filter builder's config and
// the value lists of its fields (vocabularies, lookup labels).
async function cacheSchema(app, tb) {
  const client = api(app)
  const tries = [client.get(`/record/${tb}/new`).catch(() => null), client.get(`/search/${tb}/config`).catch(() => null),
    client.get(`/records/${tb}`, { per_page: 1, total: 'false' }).catch(() => null)]
  const [tpl] = await Promise.all(tries)
  const fields = tpl?.schema?.fields || (await kvGet(app, 'tpl:' + tb))?.schema?.fields || []
  await Promise.all(fields.filter((f) => f.options_source || f.id_from_tb)
    .map((f) => client.get(`/record/${tb}/field-options`, { fld: f.name, limit: 1000 }).catch(() => null)))
}

async function pull(app, st) {
  const client = api(app)
  st.phase = 'pull'
  // The application's default tables first: they join (or leave) the
  // marks this run pulls.
  await applyDefaults(app, (await client.get('/sync/offline-tables')).tables || [])
  const ms = await marks(app)
  st.total = ms.length
  st.done = 0
  for (const m of ms) {
    await cacheSchema(app, m.tb)
    let checkpoint = m.checkpoint || ''
    for (let i = 0; i < 10000; i++) {
      const params = { checkpoint, limit: PULL_LIMIT }
      if (m.filter) params.filter = m.filter
      const page = await client.get(`/sync/${m.tb}`, params)
      await applyPull(app, m.tb, page)
      checkpoint = page.checkpoint
      if (!page.more) break
    }
    // Who may not add records has no /new template: a record read gives it.
    if (!(await kvGet(app, 'tpl:' + m.tb))) {
      const one = await db(app).rows.where('tb').equals(m.tb).first()
      if (one && !String(one.id).startsWith('tmp-')) await client.get(`/record/${m.tb}/${one.id}`).catch(() => null)
    }
    st.done++
  }
}

const runs = {}
const again = {}

// syncNow runs push, uploads and pull once; a call during a run asks for
// another right after it (the run may have read the queue or the marks
// before the change that called); it never throws: the error is in
// syncState[app].error.
export function syncNow(app) {
  if (runs[app]) { again[app] = true; return runs[app] }
  const st = stateOf(app)
  if (!db(app)) return Promise.resolve()
  st.running = true
  st.error = null
  st.refused = []
  runs[app] = (async () => {
    // Photos wait for their records (the push); the pull runs even when
    // photos could not go (their bytes stay on the device for next time).
    try {
      await push(app, st)
      try { await uploads(app, st) } catch (e) { st.error = e }
      await pull(app, st)
      // The open conflicts as the server keeps them, not only those this
      // run's push made: after a reload (the count lived in the page) or
      // a push answered to another tab, the link to resolve them stays.
      try {
        st.conflicts = ((await api(app).get('/sync/conflicts', { status: 'open' })).conflicts || []).length
      } catch { /* the run's own count stands */ }
    } catch (e) {
      st.error = e
    } finally {
      st.last = new Date().toISOString()
      st.running = false
      st.phase = ''
      delete runs[app]
      await refreshCounts(app).catch(() => {})
      if (again[app]) { again[app] = false; syncNow(app) }
    }
  })()
  return runs[app]
}

const started = new Set()
// startSync follows the network for app: back online → sync at once;
// online at start → sync; while online, every 30 s when something waits
// to be sent or the last run failed (a server that was unreachable), and
// every five minutes to pull.
export function startSync(app) {
  if (started.has(app) || typeof window === 'undefined') return
  started.add(app)
  refreshCounts(app).catch(() => {})
  if (net.online) syncNow(app)
  let ticks = 0
  setInterval(() => {
    ticks++
    if (!net.online) return
    const c = counts[app] || {}
    if (ticks % 10 === 0 || c.pending || c.uploads || stateOf(app).error) syncNow(app)
  }, 30 * 1000)
}

if (typeof window !== 'undefined') {
  window.addEventListener('online', () => {
    net.online = true
    for (const app of started) syncNow(app)
  })
  window.addEventListener('offline', () => { net.online = false })
}

export function refreshState(app) { return stateOf(app) }
export { rowKey }
