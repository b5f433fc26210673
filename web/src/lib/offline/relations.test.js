// Relations made and removed on the device (relations.js) over a real
// IndexedDB implementation (fake-indexeddb): the queue's entries, the
// record read's "rs" with the queue laid over it, and the push's shape.
import 'fake-indexeddb/auto'
import { beforeEach, describe, expect, it } from 'vitest'
import { saveSession } from '../api.js'
import { hook } from './intercept.js'
import { addRelation, deleteRelation, relationsOf, wireRS } from './relations.js'
import { applyPull, enqueue, kvPut, mark, queueList } from './store.js'

let n = 0
let app
beforeEach(async () => {
  app = `rel${++n}`
  saveSession(app, { token: 't', expires_at: null, user: { id: 3 } })
  await kvPut(app, 'tpl:units', { id_field: 'code', can_edit: true, metadata: { tb_id: 'units' }, core: { id: { name: 'id' }, code: { name: 'code' } },
    plugins: {}, schema: { rs: true, fields: [{ name: 'code', db_type: 'text' }], plugins: {} } })
  await mark(app, 'units')
  await applyPull(app, 'units', { rows: [
    { id: 10, version: 1, values: { code: 'US 1' }, rs: { 77: { id: 77, first: 10, second: 11, relation: 5, relation_label: 'covers', first_label: 'US 1', second_label: 'US 2' } } },
    { id: 11, version: 1, values: { code: 'US 2' }, rs: { 77: { id: 77, first: 11, second: 10, relation: 1, relation_label: 'is covered by', first_label: 'US 2', second_label: 'US 1' } } },
  ], removed: [], checkpoint: 'c', more: false })
})

const view = (rs) => Object.values(rs).map((r) => [r.first, r.relation, r.second, r.second_label]).sort()

describe('relations on the device', () => {
  it('shows a relation to a record made here at once, from both ends, and queues it apart from record edits', async () => {
    const made = (await enqueue(app, { table: 'units', set: { code: 'US 9' }, label: 'US 9' })).id
    const res = await addRelation(app, 'units', { first: made, relation: 2, second: 10 })
    expect(res.id).toMatch(/^tmp-/)
    expect(view(await relationsOf(app, 'units', made))).toEqual([[made, 2, 10, 'US 1']])
    expect(view(await relationsOf(app, 'units', 10))).toEqual([[10, 5, 11, 'US 2'], [10, 6, made, 'US 9']])
    await enqueue(app, { table: 'units', id: made, set: { code: 'US 9b' } })
    const q = await queueList(app)
    expect(q.map((m) => (m.rs ? 'rs' : m.create ? 'create' : 'edit'))).toEqual(['create', 'rs'])
    expect(q[0].set).toEqual({ code: 'US 9b' }) // the edit joined the creation, not the relation
    expect(wireRS(q[1].rs)).toEqual({ add: { first: { temp_id: made }, relation: 2, second: 10 } })
  })

  it('answers the record read offline with its relations', async () => {
    const made = (await enqueue(app, { table: 'units', set: { code: 'US 9' } })).id
    const added = await hook.before(app, 'POST', '/record/units/rs', { body: { first: 11, relation: 7, second: made } })
    expect(added.answer).toMatchObject({ code: 'ok_relation_add', offline: true })
    const rec = (await hook.before(app, 'GET', `/record/units/${made}`, {})).answer
    expect(view(rec.rs)).toEqual([[made, 3, 11, 'US 2']])
  })

  it('removes a relation: one never sent leaves the queue, one pulled is a queued delete', async () => {
    const { id } = await addRelation(app, 'units', { first: 10, relation: 9, second: 12 })
    await deleteRelation(app, id)
    expect(await queueList(app)).toEqual([])
    await deleteRelation(app, '77')
    expect((await queueList(app)).map((m) => [m.table, m.rs])).toEqual([['units', { delete: 77 }]])
    expect(await relationsOf(app, 'units', 10)).toEqual({})
    expect(await relationsOf(app, 'units', 11)).toEqual({})
  })

  it.each([
    ['itself', { first: 10, relation: 1, second: 10 }, 'self_relation'],
    ['a bad code', { first: 10, relation: 0, second: 11 }, 'invalid_relation'],
    ['twice', { first: 11, relation: 3, second: 10 }, 'relation_already_exist'],
  ])('refuses a relation to %s as the server would', async (_, body, code) => {
    await expect(addRelation(app, 'units', body)).rejects.toMatchObject({ code })
    expect(await queueList(app)).toEqual([])
  })
})

describe('the record picker offline', () => {
  it('finds records of a table held by label, those made here included', async () => {
    const made = (await enqueue(app, { table: 'units', set: { code: 'US 25' } })).id
    const res = await hook.fallback(app, 'GET', '/record/units/link-candidates', { params: { q: 'us 2', limit: 20 } })
    expect(res.data).toEqual([{ id: 11, label: 'US 2' }, { id: made, label: 'US 25' }])
  })
})
