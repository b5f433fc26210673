// The offline side of the API client (issue 32). api.js asks this hook
// before a call (offline: answer from the device), after a GET that
// worked (keep what the screens need offline) and after a call that
// found no network (answer from the device if it can). The screens keep
// calling the API as always:
//   GET  /records/{tb}            a table kept offline: its rows, filtered,
//                                 searched, sorted and paged here
//   GET  /record/{tb}/{id}        the row, in the record read's shape
//   GET  /record/{tb}/field-options  lookups of tables held, value lists
//   GET  /record/{tb}/link-candidates  records of a table held, by label
//   POST /record/{tb}[/{id}], DELETE /record/{tb}/{id}  queued mutations
//   POST /record/{tb}/{id}/file   a photo kept as a Blob, uploaded later
//   POST /record/{tb}/rs, DELETE /rs/{id}  queued relation changes
//   any other GET                 its last answer, when cached
// Other writes need the network (OfflineError offline_unavailable).
import { setOfflineHook } from '../api.js'
import { isTemp } from './db.js'
import { UnsupportedFilter, compile } from './filtereval.js'
import { KV_VALUE_MAX, OfflineError, addUpload, enqueue, getRow, kvGet, kvPut, markOf, marks, realId, tableRows, uploadsOf } from './store.js'
import { isOffline } from './sync.js'
import { addRelation, deleteRelation, relationsOf } from './relations.js'

const NOT_CACHED = /^\/(sync|auth|live|jobs)\b|\/export|\/file\/\d+\/(download|thumb)/

// stable: the same params in any order give one key.
function stable(v) {
  if (Array.isArray(v)) return '[' + v.map(stable).join(',') + ']'
  if (v && typeof v === 'object') return '{' + Object.keys(v).sort().filter((k) => v[k] !== undefined && v[k] !== null && v[k] !== '').map((k) => JSON.stringify(k) + ':' + stable(v[k])).join(',') + '}'
  return JSON.stringify(v)
}
export const cacheKey = (path, params) => 'get:' + path + '?' + stable(params || {})

const parseJSON = (v) => { if (typeof v !== 'string') return v; try { return JSON.parse(v) } catch { return undefined } }

// template: what a table's record screen needs besides values, from the
// last /record/{tb}/new or record read.
export async function template(app, tb) { return kvGet(app, 'tpl:' + tb) }

async function after(app, path, params, res) {
  if (NOT_CACHED.test(path)) return
  const text = JSON.stringify(res)
  if (text.length > KV_VALUE_MAX) return
  await kvPut(app, cacheKey(path, params), res)
  const m = path.match(/^\/record\/([a-z0-9_]+)\/(new|\d+)$/)
  if (m && res.schema) {
    const prev = (await kvGet(app, 'tpl:' + m[1])) || {}
    const core = Object.fromEntries(Object.entries(res.core || {}).map(([k, v]) => [k, { name: v.name, label: v.label, val: null }]))
    const plugins = Object.fromEntries(Object.entries(res.plugins || {}).map(([k, v]) => [k, { metadata: { ...v.metadata, tot: 0 }, data: [] }]))
    const tpl = { metadata: { ...res.metadata }, id_field: res.id_field, can_add: res.can_add ?? prev.can_add,
      can_edit: m[2] === 'new' ? prev.can_edit ?? res.can_add : res.can_edit, can_delete: m[2] === 'new' ? prev.can_delete : res.can_delete,
      core, plugins, schema: res.schema, defaults: m[2] === 'new' ? res.core : prev.defaults }
    await kvPut(app, 'tpl:' + m[1], tpl)
  }
  const l = path.match(/^\/records\/([a-z0-9_]+)$/)
  if (l && !params?.columns && !params?.filter) {
    const { data, ...meta } = res
    await kvPut(app, 'listmeta:' + l[1], meta)
  }
}

async function held(app, tb) { return !!(await markOf(app, tb)) }

// recordOf: a held row in GET /record/{tb}/{id}'s shape.
async function recordOf(app, tb, row) {
  const tpl = await template(app, tb)
  if (!tpl) return undefined
  const core = {}
  for (const [k, v] of Object.entries(tpl.core)) core[k] = { ...v, val: k === 'id' ? row.id : row.values[k] ?? null, val_label: row.labels?.[k] ?? null }
  core.id = { name: 'id', label: core.id?.label || 'id', val: row.id }
  // a lookup set here to another record: its label from that record if held
  for (const fd of tpl.schema.fields) {
    const v = row.values[fd.name]
    if (!fd.id_from_tb || v === null || v === undefined || v === '' || (core[fd.name].val_label && !row.pending)) continue
    const ref = await getRow(app, fd.id_from_tb, v)
    const rt = ref && (await template(app, fd.id_from_tb))
    if (ref) core[fd.name].val_label = String(ref.values[rt?.id_field || 'id'] ?? ref.id)
  }
  const plugins = {}
  for (const [ptb, p] of Object.entries(tpl.plugins || {})) {
    const data = (row.plugins?.[ptb] || []).map((pr) => Object.fromEntries(Object.entries(pr).map(([k, v]) => [k, { name: k, val: v }])))
    plugins[ptb] = { metadata: { ...p.metadata, tot: data.length }, data }
  }
  const waiting = (await uploadsOf(app, tb, row.id)).map((u) => {
    const dot = u.filename.lastIndexOf('.')
    const url = typeof URL !== 'undefined' && URL.createObjectURL ? URL.createObjectURL(u.blob) : ''
    return { id: 'up-' + u.upload_id, link_id: 'up-' + u.upload_id, filename: dot > 0 ? u.filename.slice(0, dot) : u.filename,
      ext: dot > 0 ? u.filename.slice(dot + 1) : '', size: u.size, url, thumb_url: /^image\//.test(u.blob.type) ? url : null, waiting: true }
  })
  const version = row.version ?? 0
  return { ...tpl, metadata: { ...tpl.metadata, rec_id: row.id, version }, rec_id: row.id, core, plugins,
    links: {}, backlinks: {}, manualLinks: {}, rs: await relationsOf(app, tb, row.id), files: [...(row.files || []), ...waiting], geodata: {}, bibliography: {},
    can_edit: tpl.can_edit ?? tpl.can_add ?? true, can_delete: tpl.can_delete ?? false,
    _etag: row.version != null ? `"${row.version}"` : null, _offline: true, _pending: !!row.pending || isTemp(row.id) }
}

// related: the lookups' tables held, for nested filter conditions.
async function relatedOf(app, fields) {
  const out = {}
  for (const fd of fields) {
    if (!fd.id_from_tb || out[fd.id_from_tb] || !(await held(app, fd.id_from_tb))) continue
    const tpl = await template(app, fd.id_from_tb)
    if (tpl) out[fd.id_from_tb] = { fields: tpl.schema.fields, rows: await tableRows(app, fd.id_from_tb) }
  }
  return out
}

function compare(a, b) {
  const na = a === null || a === undefined || a === ''
  const nb = b === null || b === undefined || b === ''
  if (na || nb) return na === nb ? 0 : na ? 1 : -1
  if (typeof a === 'number' && typeof b === 'number') return a - b
  return String(a).localeCompare(String(b))
}

// localList answers GET /records/{tb} from the device.
export async function localList(app, tb, params = {}) {
  const tpl = await template(app, tb)
  const meta = (await kvGet(app, 'listmeta:' + tb)) || {}
  if (!tpl) return undefined
  const fields = tpl.schema.fields
  let rows = await tableRows(app, tb)
  const filter = parseJSON(params.filter)
  if (filter) {
    const related = await relatedOf(app, fields)
    let pred
    try { pred = compile(filter, { fields, related: (x) => related[x] || null }) } catch (e) {
      if (e instanceof UnsupportedFilter) throw new OfflineError('offline_filter_unsupported', e.message)
      throw e
    }
    rows = rows.filter(pred)
  }
  if (params.search) {
    const q = String(params.search).toLowerCase()
    rows = rows.filter((r) => Object.values(r.values).some((v) => v !== null && v !== undefined && String(v).toLowerCase().includes(q)) ||
      Object.values(r.labels || {}).some((v) => String(v ?? '').toLowerCase().includes(q)))
  }
  const sf = params.sort_field
  const dir = params.sort_dir === 'desc' ? -1 : 1
  rows.sort((a, b) => {
    if (sf && sf !== 'id') { const c = compare(a.values[sf], b.values[sf]); if (c) return c * dir }
    // records made here first, then by id
    if (isTemp(a.id) !== isTemp(b.id)) return isTemp(a.id) ? -1 : 1
    return compare(a.id, b.id) * (sf === 'id' ? dir : 1)
  })
  const names = params.columns ? String(params.columns).split(',') : (meta.fields || fields.filter((f) => !f.hide).slice(0, 6)).map((f) => f.name)
  if (!names.includes('id')) names.unshift('id')
  const per = Math.min(Math.max(parseInt(params.per_page || '30', 10) || 30, 1), 500)
  const page = Math.max(parseInt(params.page || '1', 10) || 1, 1)
  const slice = rows.slice((page - 1) * per, page * per)
  const label = (n) => meta.fields?.find((f) => f.name === n)?.label || fields.find((f) => f.name === n)?.label || n
  return {
    ...meta,
    fields: names.map((n) => ({ ...(meta.fields?.find((f) => f.name === n) || {}), name: n, label: label(n) })),
    data: slice.map((r) => ({ ...Object.fromEntries(names.map((n) => [n, n === 'id' ? r.id : r.values[n] ?? null])), _pending: !!r.pending || isTemp(r.id) })),
    total: rows.length,
    page,
    per_page: per,
    can_add: meta.can_add ?? tpl.can_add,
    offline: true,
  }
}

// localLabels answers the list's label requests (lookups.js) for a table
// not held, from the labels the held rows carry.
async function localLabels(app, tb, params) {
  const f = parseJSON(params.filter)
  const ids = f?.id?._in
  const cols = String(params.columns || '').split(',')
  if (!Array.isArray(ids) || cols.length !== 2) return undefined
  const want = new Set(ids.map(String))
  const found = new Map()
  for (const m of await marks(app)) {
    const tpl = await template(app, m.tb)
    const lk = (tpl?.schema?.fields || []).filter((fd) => fd.id_from_tb === tb).map((fd) => fd.name)
    if (!lk.length) continue
    for (const r of await tableRows(app, m.tb)) {
      for (const n of lk) {
        const v = r.values[n]
        if (v != null && want.has(String(v)) && r.labels?.[n] != null) found.set(String(v), r.labels[n])
      }
    }
  }
  return { data: [...found].map(([id, l]) => ({ id: Number(id), [cols[1]]: l })), total: found.size, fields: [], offline: true }
}

// options answers GET /record/{tb}/field-options offline.
async function options(app, tb, params) {
  const tpl = await template(app, tb)
  const fd = tpl?.schema?.fields.find((f) => f.name === params.fld)
  const q = String(params.q || '').trim().toLowerCase()
  const limit = parseInt(params.limit || '20', 10) || 20
  let list = null
  if (fd?.id_from_tb && (await held(app, fd.id_from_tb))) {
    const rt = await template(app, fd.id_from_tb)
    list = (await tableRows(app, fd.id_from_tb)).map((r) => ({ value: r.id, label: String(r.values[rt?.id_field || 'id'] ?? r.id) }))
    list.sort((a, b) => a.label.localeCompare(b.label))
  } else {
    const all = await kvGet(app, cacheKey(`/record/${tb}/field-options`, { fld: params.fld, limit: 1000 }))
    list = all?.options || null
  }
  if (!list) return undefined
  return { source: fd?.id_from_tb ? 'id_from_tb' : 'cache', options: list.filter((o) => !q || String(o.label).toLowerCase().includes(q)).slice(0, limit), offline: true }
}

// candidates answers GET /record/{tb}/link-candidates (the record picker
// of relations) from a table held: its records whose label contains q,
// records made here included.
async function candidates(app, tb, params) {
  if (!(await held(app, tb))) return undefined
  const tpl = await template(app, tb)
  const q = String(params.q || '').trim().toLowerCase()
  const limit = Math.min(parseInt(params.limit || '20', 10) || 20, 50)
  const list = (await tableRows(app, tb)).map((r) => ({ id: r.id, label: String(r.values[tpl?.id_field || 'id'] ?? r.id) }))
    .filter((o) => !q || o.label.toLowerCase().includes(q))
  list.sort((a, b) => a.label.localeCompare(b.label))
  return { data: list.slice(0, limit), offline: true }
}

function unavailable() { return new OfflineError('offline_unavailable', 'not available without a network') }

// save queues POST /record/{tb}[/{id}] ({core, plugins}).
async function save(app, tb, id, body) {
  const tpl = await template(app, tb)
  if (!tpl) throw unavailable()
  const core = body?.core || {}
  const refs = tpl.schema.fields.filter((f) => f.id_from_tb).map((f) => f.name)
  const fields = new Set(tpl.schema.fields.map((f) => f.name))
  const set = Object.fromEntries(Object.entries(core).filter(([k]) => fields.has(k)))
  const hasPlugins = Object.values(body?.plugins || {}).some((l) => l?.length)
  if (hasPlugins) throw new OfflineError('offline_unavailable', 'plugin rows are saved with a network')
  const label = String(set[tpl.id_field] ?? '')
  const res = await enqueue(app, { table: tb, id, set, refs, label })
  return { code: id ? 'success_saved' : 'success_created', id: res.id, version: res.version, offline: true }
}

const routes = [
  ['GET', /^\/records\/([a-z0-9_]+)$/, async (app, [tb], o) => {
    if (await held(app, tb)) return localList(app, tb, o.params)
    return localLabels(app, tb, o.params || {})
  }],
  ['GET', /^\/record\/([a-z0-9_]+)\/field-options$/, (app, [tb], o) => options(app, tb, o.params || {})],
  ['GET', /^\/record\/([a-z0-9_]+)\/link-candidates$/, (app, [tb], o) => candidates(app, tb, o.params || {})],
  ['GET', /^\/record\/([a-z0-9_]+)\/(tmp-[0-9a-f-]+|\d+)$/, async (app, [tb, id]) => {
    const row = await getRow(app, tb, isTemp(id) ? id : Number(id))
    return row ? recordOf(app, tb, row) : undefined
  }],
  ['POST', /^\/record\/([a-z0-9_]+)\/rs$/, (app, [tb], o) => addRelation(app, tb, o.body || {})],
  ['DELETE', /^\/rs\/(tmp-[0-9a-f-]+|\d+)$/, (app, [id]) => deleteRelation(app, id)],
  ['POST', /^\/record\/([a-z0-9_]+)$/, (app, [tb], o) => save(app, tb, null, o.body)],
  ['POST', /^\/record\/([a-z0-9_]+)\/(tmp-[0-9a-f-]+|\d+)$/, (app, [tb, id], o) => save(app, tb, id, o.body)],
  ['DELETE', /^\/record\/([a-z0-9_]+)\/(tmp-[0-9a-f-]+|\d+)$/, async (app, [tb, id]) => {
    await enqueue(app, { table: tb, id, del: true })
    return { code: 'success_deleted', offline: true }
  }],
]

// resolve answers a call from the device, or undefined when it cannot.
async function resolve(app, method, path, o) {
  for (const [m, re, fn] of routes) {
    const hit = method === m && path.match(re)
    if (!hit) continue
    const out = await fn(app, hit.slice(1), o)
    if (out !== undefined) return out
    break
  }
  if (method === 'GET') {
    const cached = await kvGet(app, cacheKey(path, o.params))
    if (cached !== undefined) return { ...cached, offline: true }
  }
  return undefined
}

// A record created here and since sent: its page keeps working under
// the temp id (the server's id is used).
async function rewrite(app, path) {
  const m = path.match(/^(\/record\/[a-z0-9_]+\/)(tmp-[0-9a-f-]+)(.*)$/)
  if (!m) return path
  const real = await realId(app, m[2])
  return real != null ? m[1] + real + m[3] : path
}

// pendingRelation: a relation to a record made here and not known to
// the server yet goes through the queue even online (the push names it by
// its temp_id, after the record's creation).
async function pendingRelation(app, method, path, o) {
  if (method !== 'POST' || !/^\/record\/[a-z0-9_]+\/rs$/.test(path)) return false
  for (const v of [o.body?.first, o.body?.second]) if (isTemp(v) && (await realId(app, v)) == null) return true
  return false
}

// relationBody: a relation online whose ends made here the server has
// since answered: their real ids.
async function relationBody(app, method, path, o) {
  if (method !== 'POST' || !/^\/record\/[a-z0-9_]+\/rs$/.test(path)) return undefined
  if (!isTemp(o.body?.first) && !isTemp(o.body?.second)) return undefined
  const real = async (v) => (isTemp(v) ? await realId(app, v) : v)
  return { ...o.body, first: await real(o.body.first), second: await real(o.body.second) }
}

export const hook = {
  state: { isOffline },
  // before: {answer} from the device, {path} rewritten, or nothing.
  async before(app, method, path, o) {
    if (/^\/(sync|auth)\//.test(path)) return undefined
    const p = await rewrite(app, path)
    if (isOffline() || /\/tmp-/.test(p) || (await pendingRelation(app, method, p, o))) {
      const answer = await resolve(app, method, p, o)
      if (answer !== undefined) return { answer }
      throw unavailable()
    }
    const body = await relationBody(app, method, p, o)
    if (body) return { path: p, body }
    return p !== path ? { path: p } : undefined
  },
  after,
  async fallback(app, method, path, o) {
    if (/^\/(sync|auth)\//.test(path)) return undefined
    try { return await resolve(app, method, await rewrite(app, path), o) } catch (e) {
      if (e instanceof OfflineError && e.code === 'offline_unavailable') return undefined
      throw e
    }
  },
  // upload: a photo for a record (POST /record/{tb}/{id}/file) kept here.
  async upload(app, path, file) {
    const m = path.match(/^\/record\/([a-z0-9_]+)\/(tmp-[0-9a-f-]+|\d+)\/file$/)
    if (!m) return undefined
    const real = isTemp(m[2]) ? await realId(app, m[2]) : null
    const u = await addUpload(app, { table: m[1], id: real ?? m[2], file })
    return { offline: true, upload_id: u.upload_id, filename: u.filename }
  },
}

export function installOfflineHook() { setOfflineHook(hook) }
