import { describe, expect, it } from 'vitest'
import { applyToList, mergeRemote, route, rowOf, savedBy, specKey, stable, unionSet } from './live.js'

describe('subscriptions', () => {
  it('keys equal filters alike whatever the order of their keys', () => {
    expect(stable({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(stable({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }))
    expect(specKey({ table: 'finds', filter: { a: 1, b: 2 } })).toBe(specKey({ table: 'finds', filter: { b: 2, a: 1 } }))
    expect(specKey({ table: 'finds', record: 42 })).not.toBe(specKey({ table: 'finds', record: 43 }))
    expect(specKey({ table: 'finds' })).toBe(specKey({ table: 'finds', filter: null }))
  })

  it('sends the union of the views’ subscriptions, one entry per distinct one, ids kept while held', () => {
    const ids = new Map()
    const counter = { n: 0 }
    const list = { table: 'finds', filter: { weight: { _gt: 5 } } }
    const rec = { table: 'finds', record: '42' }
    const first = unionSet([list, rec, { table: 'finds', filter: { weight: { _gt: 5 } } }, rec], ids, counter)
    expect(first).toEqual([
      { id: 's1', table: 'finds', filter: { weight: { _gt: 5 } } },
      { id: 's2', table: 'finds', record: 42 },
    ])
    // The list goes, another table's list comes: the record keeps its id,
    // the new one gets a new id, the old one is forgotten.
    const second = unionSet([rec, { table: 'units' }], ids, counter)
    expect(second).toEqual([{ id: 's2', table: 'finds', record: 42 }, { id: 's3', table: 'units' }])
    expect([...ids.values()]).toEqual(['s2', 's3'])
    expect(unionSet([], ids, counter)).toEqual([])
    expect(ids.size).toBe(0)
  })

  it('routes an event to the views whose subscription it names, broadcasts to all', () => {
    const ids = new Map()
    const a = { key: specKey({ table: 'finds' }), handler: 'list' }
    const b = { key: specKey({ table: 'finds', record: 7 }), handler: 'form' }
    const c = { key: specKey({ table: 'finds', record: 7 }), handler: 'page' }
    unionSet([{ table: 'finds' }, { table: 'finds', record: 7 }], ids)
    const to = (type, data) => route(type, data, [a, b, c], ids).map((e) => e.handler)
    expect(to('update', { subscriptions: ['s1', 's2'] })).toEqual(['list', 'form', 'page'])
    expect(to('create', { subscriptions: ['s1'] })).toEqual(['list'])
    expect(to('leave', { subscriptions: ['s2'] })).toEqual(['form', 'page'])
    expect(to('update', { subscriptions: ['s9'] })).toEqual([])
    expect(to('update', {})).toEqual([])
    expect(to('resync', { reason: 'window' })).toEqual(['list', 'form', 'page'])
    expect(to('schema', { table: '' })).toEqual(['list', 'form', 'page'])
  })
})

describe('a record saved elsewhere under a form', () => {
  const fields = [
    { name: 'code', type: 'text' },
    { name: 'weight', db_type: 'float' },
    { name: 'tags', type: 'multi_select' },
    { name: 'ok', type: 'boolean' },
    { name: 'stamp', readonly: true },
  ]
  const core = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, { val: v }]))
  const base = core({ code: 'A', weight: 5, tags: '["x"]', ok: 0, stamp: 1 })

  it('takes what the user did not touch, asks about what both changed differently', () => {
    const remote = core({ code: 'B', weight: 6, tags: '["x","y"]', ok: 1, stamp: 2 })
    // The user changed code (to C: conflict) and weight (to 6, what the
    // other saved too: no conflict), nothing else.
    const form = { code: 'C', weight: 6, tags: ['x'], ok: false, stamp: 1 }
    const m = mergeRemote(fields, base, remote, form)
    expect(m.changed).toEqual(['code', 'weight', 'tags', 'ok', 'stamp'])
    expect(m.conflicts).toEqual(['code'])
    expect(m.take).toEqual({ tags: ['x', 'y'], ok: true, stamp: 2 })
  })

  it('sees no change when the saved values read the same', () => {
    const remote = core({ code: 'A', weight: 5, tags: ['x'], ok: false, stamp: 1 })
    const m = mergeRemote(fields, base, remote, { code: 'Z', weight: 5, tags: ['x'], ok: false, stamp: 1 })
    expect(m).toEqual({ changed: [], take: {}, conflicts: [] })
  })

  it('says who saved: me elsewhere, another user, or an actor', () => {
    expect(savedBy({ user_id: 3 }, 3)).toEqual({ me: true, userId: 3 })
    expect(savedBy({ user_id: 4 }, '3')).toEqual({ userId: 4 })
    expect(savedBy({ user_id: null, actor: 'plugin:geodata' }, 3)).toEqual({ actor: 'plugin:geodata' })
  })
})

describe('a list updated live', () => {
  const names = ['id', 'code', 'unit']
  const rec = (code, unit, label) => ({ core: { code: { val: code }, unit: { val: unit, val_label: label }, other: { val: 'x' } } })
  const start = () => ({ data: [{ id: 1, code: 'A', unit: 3 }, { id: 2, code: 'B', unit: null }], total: 12, fresh: new Set(), waiting: new Set() })

  it('builds a row of the list’s columns with its lookup labels', () => {
    expect(rowOf(9, rec('Z', 4, 'US 4'), names)).toEqual({ row: { id: 9, code: 'Z', unit: 4 }, labels: [['unit', '4', 'US 4']] })
  })

  it('puts an arrival on top, marked, when the user is at the top of page 1', () => {
    const s = applyToList(start(), 'create', { id: 9, record: rec('Z', 4, 'US 4') }, { names, insert: true })
    expect(s.data.map((r) => r.id)).toEqual([9, 1, 2])
    expect(s.total).toBe(13)
    expect([...s.fresh]).toEqual(['9'])
    expect(s.labels).toEqual([['unit', '4', 'US 4']])
    // The same event again (a replay) changes nothing more.
    const again = applyToList(s, 'create', { id: 9, record: rec('Z', 4, 'US 4') }, { names, insert: true })
    expect(again.data.map((r) => r.id)).toEqual([9, 1, 2])
    expect(again.total).toBe(13)
  })

  it('counts arrivals instead when the user is elsewhere, and forgets one deleted meanwhile', () => {
    let s = applyToList(start(), 'enter', { id: 9, record: rec('Z', 4) }, { names, insert: false })
    s = applyToList(s, 'create', { id: 10, record: rec('Y', 4) }, { names, insert: false })
    s = applyToList(s, 'create', { id: 10, record: rec('Y', 4) }, { names, insert: false })
    expect(s.data.map((r) => r.id)).toEqual([1, 2])
    expect([...s.waiting]).toEqual(['9', '10'])
    expect(s.total).toBe(12)
    s = applyToList(s, 'delete', { id: 10 }, { names, insert: false })
    expect([...s.waiting]).toEqual(['9'])
    expect(s.total).toBe(12)
  })

  it('changes a row in place and takes deleted or departed rows away', () => {
    let s = applyToList(start(), 'update', { id: 2, record: rec('B2', 3, 'US 3') }, { names, insert: true })
    expect(s.data).toEqual([{ id: 1, code: 'A', unit: 3 }, { id: 2, code: 'B2', unit: 3 }])
    // An update of a row on another page leaves this one alone.
    const other = applyToList(s, 'update', { id: 77, record: rec('Q', 1) }, { names, insert: true })
    expect(other.data).toBe(s.data)
    s = applyToList(s, 'leave', { id: 1 }, { names, insert: true })
    expect(s.data.map((r) => r.id)).toEqual([2])
    expect(s.total).toBe(11)
    // A row of another page deleted: the total still counts it out.
    s = applyToList(s, 'delete', { id: 55 }, { names, insert: true })
    expect(s.total).toBe(10)
  })
})
