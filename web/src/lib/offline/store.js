// What the device holds of an application (issue 32): the tables kept
// offline, their rows with the changes waiting to be sent laid over them,
// the cached answers the screens need (schema, vocabularies), and the
// queue. Everything is bounded: KV_MAX cached answers (oldest dropped),
// QUEUE_MAX waiting mutations and UPLOAD_MAX waiting photos (then a clear
// error), and a table's rows are what its filter selects.
import { reactive } from 'vue'
import { db, deviceId, isTemp, rowKey, uuid } from './db.js'

export const KV_MAX = 400
export const QUEUE_MAX = 2000
export const UPLOAD_MAX = 200
export const KV_VALUE_MAX = 512 * 1024 // characters of one cached answer

export class OfflineError extends Error {
  constructor(code, message) { super(message || code); this.code = code; this.status = 0; this.body = { code, message, detail: message }; this.network = false }
}

// counts is what the header shows, per app: {pending, refused, uploads, marks}.
export const counts = reactive({})

// ---- cached answers ----

export async function kvGet(app, key) {
  const d = db(app)
  return d ? (await d.kv.get(key))?.value : undefined
}

export async function kvPut(app, key, value) {
  const d = db(app)
  if (!d) return
  await d.kv.put({ key, value, at: Date.now() })
  if (Math.random() < 0.05) await trimKV(d)
}

async function trimKV(d) {
  const n = await d.kv.count()
  if (n <= KV_MAX) return
  const all = await d.kv.toArray()
  const old = all.filter((x) => x.key.startsWith('get:')).sort((a, b) => a.at - b.at).slice(0, n - KV_MAX)
  await d.kv.bulkDelete(old.map((x) => x.key))
}

// ---- marks: the tables kept offline ----

export async function marks(app) {
  const d = db(app)
  return d ? d.marks.toArray() : []
}

export async function markOf(app, tb) {
  const d = db(app)
  return d ? d.marks.get(tb) : undefined
}

// mark keeps tb offline with an optional filter (the filter language);
// a changed filter starts its pull again from nothing. byAdmin: the
// application's default (defaults.js) made it; a mark the user makes is
// theirs, and takes back a default they had removed.
export async function mark(app, tb, filter = null, { byAdmin = false } = {}) {
  const d = db(app)
  const prev = await d.marks.get(tb)
  const same = prev && JSON.stringify(prev.filter || null) === JSON.stringify(filter || null)
  await d.marks.put({ tb, filter: filter || null, checkpoint: same ? prev.checkpoint : '', synced_at: same ? prev.synced_at : null, by_admin: byAdmin })
  if (!byAdmin) await forgetRemoval(d, tb)
  await refreshCounts(app)
}

// unmark stops keeping tb: its pulled rows go; records created here and
// changes not sent yet stay until they are. A user removing a default
// mark is remembered on this device, so the next sync does not bring it
// back.
export async function unmark(app, tb, { byAdmin = false } = {}) {
  const d = db(app)
  await d.transaction('rw', d.marks, d.rows, d.queue, d.kv, async () => {
    const prev = await d.marks.get(tb)
    await d.marks.delete(tb)
    if (prev?.by_admin && !byAdmin) {
      const removed = (await d.kv.get(REMOVED))?.value || []
      if (!removed.includes(tb)) await d.kv.put({ key: REMOVED, value: [...removed, tb], at: Date.now() })
    }
    const waiting = new Set((await d.queue.toArray()).map((m) => m.k))
    const gone = (await d.rows.where('tb').equals(tb).toArray()).filter((r) => !waiting.has(r.k)).map((r) => r.k)
    await d.rows.bulkDelete(gone)
  })
  await refreshCounts(app)
}

// The defaults this user removed on this device (defaults.js reads it).
const REMOVED = 'defaults:removed'

async function forgetRemoval(d, tb) {
  const removed = (await d.kv.get(REMOVED))?.value || []
  if (removed.includes(tb)) await d.kv.put({ key: REMOVED, value: removed.filter((x) => x !== tb), at: Date.now() })
}

// ---- rows ----

// applyPull applies one page of GET /sync/{tb} (reset, rows, removed)
// and moves the mark's checkpoint, in one transaction.
export async function applyPull(app, tb, page) {
  const d = db(app)
  await d.transaction('rw', d.rows, d.marks, async () => {
    if (page.reset) {
      const keys = (await d.rows.where('tb').equals(tb).toArray()).filter((r) => !isTemp(r.id)).map((r) => r.k)
      await d.rows.bulkDelete(keys)
    }
    await d.rows.bulkPut((page.rows || []).map((r) => ({ k: rowKey(tb, r.id), tb, id: r.id, version: r.version,
      values: r.values || {}, labels: r.labels || {}, plugins: r.plugins || {}, files: r.files || [], rs: r.rs || {} })))
    await d.rows.bulkDelete((page.removed || []).map((id) => rowKey(tb, id)))
    const m = await d.marks.get(tb)
    if (m) await d.marks.put({ ...m, checkpoint: page.checkpoint ?? m.checkpoint, synced_at: page.more ? m.synced_at : new Date().toISOString() })
  })
}

// overlay lays the waiting mutations over the rows: {k → {set, delete, create}}.
async function overlay(d) {
  const out = new Map()
  for (const m of await d.queue.orderBy('n').toArray()) {
    if (m.state === 'refused' || m.rs) continue // relations: relations.js
    const o = out.get(m.k) || { set: {}, delete: false }
    Object.assign(o.set, m.set || {})
    if (m.delete) o.delete = true
    out.set(m.k, o)
  }
  return out
}

function withOverlay(row, o) {
  if (!o) return row
  return { ...row, values: { ...row.values, ...o.set }, pending: true }
}

// tableRows: every row of tb the device holds, as it will be once the
// queue is sent (records deleted here left out).
export async function tableRows(app, tb) {
  const d = db(app)
  if (!d) return []
  const ov = await overlay(d)
  return (await d.rows.where('tb').equals(tb).toArray()).filter((r) => !ov.get(r.k)?.delete).map((r) => withOverlay(r, ov.get(r.k)))
}

export async function getRow(app, tb, id) {
  const d = db(app)
  if (!d) return null
  const r = await d.rows.get(rowKey(tb, id))
  if (!r) return null
  const o = (await overlay(d)).get(r.k)
  return o?.delete ? null : withOverlay(r, o)
}

// ---- the queue ----

// enqueue records a change made on the device. A change to a record whose
// previous change has not been sent yet joins it (one mutation, so its
// base version stays the one the device started from); a record created
// here gets its temp id and a row of its own. refs names the lookup fields
// (their temp ids are sent as {"temp_id": ...}).
export async function enqueue(app, { table, id, set = {}, del = false, refs = [], label = '' }) {
  const d = db(app)
  if (!d) throw new OfflineError('offline_signed_out')
  const create = id === undefined || id === null || id === 'new'
  let out
  await d.transaction('rw', d.queue, d.rows, d.kv, async () => {
    if (await d.queue.count() >= QUEUE_MAX) throw new OfflineError('offline_queue_full', `at most ${QUEUE_MAX} changes wait to be sent: connect to send them`)
    if (create) {
      const tid = 'tmp-' + uuid()
      await d.rows.put({ k: rowKey(table, tid), tb: table, id: tid, version: null, values: {}, labels: {}, plugins: {}, files: [], temp: true })
      await d.queue.add({ mutation_id: uuid(), k: rowKey(table, tid), table, temp_id: tid, create: true, set, delete: false, refs, state: 'pending', label, at: Date.now() })
      out = { id: tid, version: null }
      return
    }
    const k = rowKey(table, id)
    const row = await d.rows.get(k)
    const open = (await d.queue.where('k').equals(k).toArray()).filter((m) => m.state === 'pending' && !m.seq)
    const last = open[open.length - 1]
    if (last && !del) {
      await d.queue.update(last.n, { set: { ...last.set, ...set }, refs: [...new Set([...(last.refs || []), ...refs])], at: Date.now() })
    } else if (last && del && last.temp_id && last.k === k) {
      // created and deleted before it was ever sent: nothing to send
      await d.queue.delete(last.n)
      await d.rows.delete(k)
    } else {
      const m = { mutation_id: uuid(), k, table, set: del ? {} : set, delete: del, refs, state: 'pending', label, at: Date.now() }
      if (isTemp(id)) m.temp_id = id
      else { m.id = Number(id); m.base_version = row?.version ?? undefined }
      await d.queue.add(m)
    }
    out = { id, version: row?.version ?? null }
  })
  await refreshCounts(app)
  return out
}

// discard drops a refused mutation (or one never sent) from the queue.
export async function discard(app, n) {
  const d = db(app)
  const m = await d.queue.get(n)
  if (!m || (m.seq && m.state !== 'refused')) return
  await d.queue.delete(n)
  if (m.temp_id && !(await d.queue.where('k').equals(m.k).count())) await d.rows.delete(m.k)
  await refreshCounts(app)
}

export async function queueList(app) {
  const d = db(app)
  return d ? d.queue.orderBy('n').toArray() : []
}

// ---- photos ----

export async function addUpload(app, { table, id, file, description = '' }) {
  const d = db(app)
  if (await d.uploads.count() >= UPLOAD_MAX) throw new OfflineError('offline_uploads_full', `at most ${UPLOAD_MAX} photos wait to be sent`)
  const u = { upload_id: uuid(), k: rowKey(table, id), table, filename: file.name || 'photo.jpg', size: file.size,
    blob: file, description, state: 'waiting', offset: 0, at: Date.now() }
  if (isTemp(id)) u.temp_id = id
  else u.id = Number(id)
  await d.uploads.put(u)
  await refreshCounts(app)
  return u
}

// discardUpload drops a photo that waits (one the server refused).
export async function discardUpload(app, uploadId) {
  await db(app).uploads.delete(uploadId)
  await refreshCounts(app)
}

export async function uploadsOf(app, tb, id) {
  const d = db(app)
  return d ? d.uploads.where('k').equals(rowKey(tb, id)).toArray() : []
}

// ---- temp ids the server has answered ----

export async function realId(app, tempId) {
  const map = (await kvGet(app, 'tempids')) || {}
  return map[tempId] ?? null
}

export async function refreshCounts(app) {
  const d = db(app)
  if (!d) return
  const q = await d.queue.toArray()
  counts[app] = {
    pending: q.filter((m) => m.state !== 'refused').length,
    refused: q.filter((m) => m.state === 'refused').length,
    uploads: await d.uploads.count(),
    marks: await d.marks.count(),
  }
}

export { deviceId }
