import { describe, expect, it } from 'vitest'
import { labelRequests, labelsFrom, lookupColumns } from './lookups.js'

const config = [
  { value: 'finds:label', label: 'Inventory number', type: 'text' },
  { value: 'finds:unit', label: 'Unit', type: 'select', ref_tb: 'units', ref_field: 'code' },
  { value: 'finds:box', label: 'Box', type: 'select', ref_tb: 'boxes', ref_field: 'id' },
  { value: 'finds_radiocarbon:unit', label: 'x', type: 'select', ref_tb: 'units', ref_field: 'code' },
]

describe('lookup labels', () => {
  it('finds the shown lookup columns that have a label field', () => {
    expect(lookupColumns(config, 'finds', ['label', 'unit', 'box'])).toEqual([{ name: 'unit', refTb: 'units', refField: 'code' }])
    expect(lookupColumns(config, 'finds', ['label'])).toEqual([])
  })
  it('asks once per column for the distinct ids of the page', () => {
    const reqs = labelRequests([{ name: 'unit', refTb: 'units', refField: 'code' }], [{ unit: 3 }, { unit: 3 }, { unit: 7 }, { unit: null }])
    expect(reqs).toEqual([{ column: 'unit', path: '/records/units', refField: 'code',
      params: { filter: { id: { _in: ['3', '7'] } }, columns: 'id,code', per_page: 200, total: 'false' } }])
    expect(labelRequests([{ name: 'unit', refTb: 'units', refField: 'code' }], [{ unit: null }])).toEqual([])
  })
  it('reads the labels of an answer', () => {
    const m = labelsFrom({ data: [{ id: 3, code: 'US 3' }, { id: 7, code: null }] }, 'code')
    expect([...m]).toEqual([['3', 'US 3']])
  })
})
