// The device's side of the offline app over a real IndexedDB
// implementation (fake-indexeddb, in memory): the queue's rules and the
// list and record answered from the device. What reaches the server is
// checked by the browser scenarios against a real one.
import 'fake-indexeddb/auto'
import { beforeEach, describe, expect, it } from 'vitest'
import { saveSession } from '../api.js'
import { db } from './db.js'
import { cacheKey, hook, localList } from './intercept.js'
import { applyPull, enqueue, getRow, kvPut, mark, queueList, tableRows, unmark } from './store.js'

let n = 0
let app
const finds = [
  { name: 'label', label: 'Label', db_type: 'text' }, { name: 'unit', label: 'Unit', db_type: 'int', id_from_tb: 'units' },
  { name: 'weight', label: 'Weight', db_type: 'float' },
]
async function seed() {
  await kvPut(app, 'tpl:finds', { id_field: 'label', can_add: true, can_edit: true, metadata: { tb_id: 'finds', tb_label: 'Finds' },
    core: Object.fromEntries(['id', ...finds.map((f) => f.name)].map((k) => [k, { name: k, label: k, val: null }])), plugins: {}, schema: { fields: finds, plugins: {} } })
  await kvPut(app, 'tpl:units', { id_field: 'code', core: { id: { name: 'id' }, code: { name: 'code' } }, plugins: {}, schema: { fields: [{ name: 'code', db_type: 'text' }], plugins: {} } })
  await mark(app, 'finds')
  await mark(app, 'units')
  await applyPull(app, 'units', { rows: [{ id: 10, version: 1, values: { code: 'US 1' } }, { id: 11, version: 1, values: { code: 'US 2' } }], removed: [], checkpoint: 'u1', more: false })
  await applyPull(app, 'finds', { reset: true, rows: [1, 2, 3, 4].map((i) => ({ id: i, version: 100 + i, values: { label: `F-${i}`, unit: i % 2 ? 10 : 11, weight: i * 10 }, labels: { unit: i % 2 ? 'US 1' : 'US 2' } })), removed: [], checkpoint: 'f1', more: false })
}

beforeEach(async () => {
  app = `dig${++n}`
  saveSession(app, { token: 't', expires_at: null, user: { id: 7 } })
  await seed()
})

describe('the queue', () => {
  it('keeps one mutation per record until it is sent, based on the version pulled', async () => {
    await enqueue(app, { table: 'finds', id: '2', set: { weight: 21 } })
    await enqueue(app, { table: 'finds', id: '2', set: { label: 'F-2b' } })
    const q = await queueList(app)
    expect(q).toHaveLength(1)
    expect(q[0]).toMatchObject({ table: 'finds', id: 2, base_version: 102, set: { weight: 21, label: 'F-2b' }, delete: false, state: 'pending' })
    expect((await getRow(app, 'finds', 2)).values).toMatchObject({ label: 'F-2b', weight: 21, unit: 11 })
  })

  it('gives a new record a temp id; its later changes join the creation; deleting it unsent leaves nothing', async () => {
    const { id } = await enqueue(app, { table: 'finds', id: null, set: { label: 'N-1', unit: 10 }, refs: ['unit'] })
    expect(id).toMatch(/^tmp-[0-9a-f-]{36}$/)
    await enqueue(app, { table: 'finds', id, set: { weight: 5 } })
    const q = await queueList(app)
    expect(q).toHaveLength(1)
    expect(q[0]).toMatchObject({ temp_id: id, set: { label: 'N-1', unit: 10, weight: 5 }, refs: ['unit'] })
    expect(q[0].id).toBeUndefined()
    await enqueue(app, { table: 'finds', id, del: true })
    expect(await queueList(app)).toHaveLength(0)
    expect(await getRow(app, 'finds', id)).toBeNull()
  })

  it('a pull never overwrites a change not sent, and a reset keeps records made here', async () => {
    const { id } = await enqueue(app, { table: 'finds', id: null, set: { label: 'N-2', unit: 11 } })
    await enqueue(app, { table: 'finds', id: '1', set: { weight: 99 } })
    await applyPull(app, 'finds', { reset: true, rows: [{ id: 1, version: 201, values: { label: 'F-1', unit: 10, weight: 11 } }], removed: [], checkpoint: 'f2', more: false })
    const rows = await tableRows(app, 'finds')
    expect(rows.map((r) => r.id).sort()).toEqual([1, id].sort())
    expect(rows.find((r) => r.id === 1).values.weight).toBe(99)
    await unmark(app, 'finds')
    expect((await tableRows(app, 'finds')).map((r) => String(r.id)).sort()).toEqual(['1', id].sort()) // waiting rows stay
  })

  it('keeps each account of the app in a database of its own', async () => {
    const other = db(app)
    saveSession(app, { token: 't', expires_at: null, user: { id: 8 } })
    expect(db(app)).not.toBe(other)
    expect(await tableRows(app, 'finds')).toEqual([])
  })
})

describe('answers from the device', () => {
  it('lists with the filter, search, sort and pages, new records first', async () => {
    const { id } = await enqueue(app, { table: 'finds', id: null, set: { label: 'F-9', unit: 11, weight: 90 } })
    let r = await localList(app, 'finds', { filter: JSON.stringify({ unit: { code: { _eq: 'US 2' } } }), per_page: 2 })
    expect(r.total).toBe(3)
    expect(r.data.map((x) => x.id)).toEqual([id, 2])
    expect(r.data[0]._pending).toBe(true)
    r = await localList(app, 'finds', { sort_field: 'weight', sort_dir: 'desc', search: 'f-', columns: 'id,weight' })
    expect(r.data.map((x) => x.weight)).toEqual([90, 40, 30, 20, 10])
    expect(r.fields.map((f) => f.name)).toEqual(['id', 'weight'])
    await expect(localList(app, 'finds', { filter: '{"nosuch":{"_eq":1}}' })).rejects.toMatchObject({ code: 'offline_filter_unsupported' })
  })

  it('answers a record in the record read shape, and queues its save', async () => {
    await enqueue(app, { table: 'finds', id: '3', set: { unit: 11 } })
    const { answer } = await hookOffline(() => hook.before(app, 'GET', '/record/finds/3', {}))
    expect(answer.core.label.val).toBe('F-3')
    expect(answer.core.unit).toMatchObject({ val: 11, val_label: 'US 2' }) // the label of the unit set here, from the units held
    expect(answer._etag).toBe('"103"')
    const saved = await hookOffline(() => hook.before(app, 'POST', '/record/finds', { body: { core: { label: 'N-3', unit: 10, nosuch: 1 }, plugins: {} } }))
    expect(saved.answer.id).toMatch(/^tmp-/)
    const q = await queueList(app)
    expect(q[1]).toMatchObject({ set: { label: 'N-3', unit: 10 }, refs: ['unit'] })
    const opts = await hookOffline(() => hook.before(app, 'GET', '/record/finds/field-options', { params: { fld: 'unit', q: 'us', limit: 20 } }))
    expect(opts.answer.options).toEqual([{ value: 10, label: 'US 1' }, { value: 11, label: 'US 2' }])
  })

  it('answers other GETs from their last answer, and says what it cannot do', async () => {
    await kvPut(app, cacheKey('/tables', undefined), { tables: [{ name: 'finds' }] })
    expect((await hookOffline(() => hook.before(app, 'GET', '/tables', {}))).answer.tables).toEqual([{ name: 'finds' }])
    await expect(hookOffline(() => hook.before(app, 'POST', '/record/finds/1/duplicate', {}))).rejects.toMatchObject({ code: 'offline_unavailable' })
  })
})

// hookOffline runs fn with the browser offline.
async function hookOffline(fn) {
  const { net } = await import('./sync.js')
  net.online = false
  try { return await fn() } finally { net.online = true }
}
