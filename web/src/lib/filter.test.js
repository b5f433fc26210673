import { describe, expect, it } from 'vitest'
import { decode, encode, fromFilter, isComplete, newCond, newGroup, operatorsFor, toFilter } from './filter.js'

const strip = (n) => (n.kind === 'group' ? { join: n.join, items: n.items.map(strip) } : { path: n.path, op: n.op, value: n.value })

describe('filter model', () => {
  it('writes nested AND/OR groups in the filter language', () => {
    const tree = newGroup('and', [
      newCond(['material'], '_eq', 'bronze'),
      newGroup('or', [newCond(['weight'], '_gt', '4000'), newCond(['unit', 'code'], '_starts_with', 'US 1')]),
    ])
    expect(toFilter(tree)).toEqual({ _and: [{ material: { _eq: 'bronze' } },
      { _or: [{ weight: { _gt: '4000' } }, { unit: { code: { _starts_with: 'US 1' } } }] }] })
  })

  it('leaves out incomplete conditions and empty groups', () => {
    const tree = newGroup('and', [newCond(['a'], '_eq', ''), newGroup('or', []), newCond(['b'], '_null', '')])
    expect(toFilter(tree)).toEqual({ b: { _null: true } })
    expect(toFilter(newGroup('and', [newCond([], '_eq', 'x')]))).toBeNull()
  })

  it('sends lists and flags as the server reads them', () => {
    expect(toFilter(newCond(['id'], '_in', '1, 2,,3'))).toEqual({ id: { _in: ['1', '2', '3'] } })
    expect(isComplete(newCond(['w'], '_between', '1'))).toBe(false)
    expect(toFilter(newCond(['w'], '_between', '1,5'))).toEqual({ w: { _between: ['1', '5'] } })
    expect(toFilter(newCond(['w'], '_nempty', 'ignored'))).toEqual({ w: { _nempty: true } })
  })

  it('reads back what it writes (the URL round trip)', () => {
    const f = { _and: [{ material: { _eq: 'bronze' } }, { _or: [{ weight: { _gt: '4000' } }, { unit: { code: { _starts_with: 'US 1' } } }] }] }
    const tree = fromFilter(decode(encode(f)))
    expect(toFilter(tree)).toEqual(f)
    expect(strip(tree).items[1]).toEqual({ join: 'or', items: [
      { path: ['weight'], op: '_gt', value: '4000' }, { path: ['unit', 'code'], op: '_starts_with', value: 'US 1' }] })
  })

  it('reads filters written by hand: several keys and operators ANDed, plugin tables, lists', () => {
    const tree = fromFilter({ label: { _icontains: 'amph', _nempty: true }, units_radiocarbon: { bp: { _lt: 3000 } }, id: { _in: [1, 2] } })
    expect(strip(tree)).toEqual({ join: 'and', items: [
      { path: ['label'], op: '_icontains', value: 'amph' }, { path: ['label'], op: '_nempty', value: '' },
      { path: ['units_radiocarbon', 'bp'], op: '_lt', value: '3000' }, { path: ['id'], op: '_in', value: '1, 2' }] })
    expect(strip(fromFilter({ _or: [{ a: { _eq: 1 } }, { b: { _eq: 2 }, c: { _eq: 3 } }] }))).toEqual({ join: 'or', items: [
      { path: ['a'], op: '_eq', value: '1' }, { join: 'and', items: [{ path: ['b'], op: '_eq', value: '2' }, { path: ['c'], op: '_eq', value: '3' }] }] })
  })

  it('ignores a URL filter that is not JSON', () => {
    expect(decode('{nope')).toBeNull()
    expect(decode('')).toBeNull()
    expect(toFilter(fromFilter(null))).toBeNull()
  })

  it('offers operators that suit the type', () => {
    expect(operatorsFor('boolean')).not.toContain('_icontains')
    expect(operatorsFor('date')).toContain('_between')
    expect(operatorsFor('text')[0]).toBe('_icontains')
  })
})
