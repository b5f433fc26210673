import { describe, expect, it } from 'vitest'
import { UnsupportedFilter, compile, fold, matches } from './filtereval.js'

const fields = [
  { name: 'label', db_type: 'text' }, { name: 'count', db_type: 'int' }, { name: 'weight', db_type: 'float' },
  { name: 'found', db_type: 'date', type: 'date' }, { name: 'kept', db_type: 'bool', type: 'boolean' },
  { name: 'unit', db_type: 'int', id_from_tb: 'units' },
]
const rows = [
  { id: 1, values: { label: 'Amphora', count: 3, weight: 1.5, found: '2020-05-01', kept: true, unit: 10 } },
  { id: 2, values: { label: 'amphora rim', count: 12, weight: null, found: '2021-01-09', kept: false, unit: 11 } },
  { id: 3, values: { label: 'Ärmel', count: null, weight: 0.2, found: null, kept: null, unit: null } },
  { id: 4, values: { label: '', count: 0, weight: 2, found: '2019-12-31', kept: false, unit: 10 } },
  { id: 'tmp-a', values: { label: 'Zeta', count: '7', weight: '3', found: '2020-05-20', kept: 1, unit: 'tmp-u' } },
]
const units = { fields: [{ name: 'code', db_type: 'text' }], rows: [{ id: 10, values: { code: 'US 1' } }, { id: 11, values: { code: 'US 2' } }, { id: 'tmp-u', values: { code: 'US 1b' } }] }
const ctx = { fields, related: (tb) => (tb === 'units' ? units : null) }
const ids = (f) => matches(rows, f, ctx).map((r) => r.id)

describe('the filter language on the device', () => {
  it.each([
    [{ label: { _icontains: 'AMPH' } }, [1, 2]],
    [{ label: { _contains: 'Amph' } }, [1]],
    [{ label: { _ncontains: 'amph' } }, [3, 4, 'tmp-a']],
    [{ label: { _eq: 'Amphora' } }, [1]],
    [{ label: { _neq: 'Amphora' } }, [2, 3, 4, 'tmp-a']],
    [{ label: { _starts_with: 'ä' } }, [3]],
    [{ label: { _ends_with: 'RIM' } }, [2]],
    [{ label: { _nends_with: 'rim' } }, [1, 3, 4, 'tmp-a']],
    [{ label: { _gt: 'Z' } }, [2, 3, 'tmp-a']],
    [{ label: { _empty: true } }, [4]],
    [{ label: { _nempty: true } }, [1, 2, 3, 'tmp-a']],
    [{ count: { _gt: 2 } }, [1, 2, 'tmp-a']],
    [{ count: { _between: '3, 7' } }, [1, 'tmp-a']],
    [{ count: { _in: [0, 12] } }, [2, 4]],
    [{ count: { _nin: '0,12' } }, [1, 3, 'tmp-a']],
    [{ count: { _null: true } }, [3]],
    [{ count: { _starts_with: '1' } }, [2]],
    [{ weight: { _lte: 1.5 } }, [1, 3]],
    [{ found: { _gte: '2020-05-01' } }, [1, 2, 'tmp-a']],
    [{ found: { _starts_with: '2020-05' } }, [1, 'tmp-a']],
    [{ kept: { _eq: true } }, [1, 'tmp-a']],
    [{ kept: { _neq: 'true' } }, [2, 3, 4]],
    [{ id: { _in: '1,3' } }, [1, 3]],
    [{ unit: { _eq: 10 } }, [1, 4]],
    [{ unit: { code: { _eq: 'US 1' } } }, [1, 4]],
    [{ unit: { code: { _starts_with: 'us 1' } } }, [1, 4, 'tmp-a']],
    [{ _or: [{ count: { _lt: 1 } }, { label: { _icontains: 'rim' } }] }, [2, 4]],
    [{ _and: [{ count: { _nnull: true } }, { kept: { _eq: false } }], label: { _nempty: true } }, [2]],
    [{}, [1, 2, 3, 4, 'tmp-a']],
    [{ _or: [] }, [1, 2, 3, 4, 'tmp-a']],
  ])('%j', (f, want) => { expect(ids(f)).toEqual(want) })

  it('says what it cannot evaluate instead of guessing', () => {
    for (const f of [{ nosuch: { _eq: 1 } }, { label: { _chrono_overlap: [1, 2] } }, { finds_dates: { year: { _lt: 0 } } },
      { label: { _null: false } }, { weight: { _icontains: '1' } }, { unit: { code: { x: { _eq: 1 } } } }]) {
      expect(() => compile(f, ctx)).toThrow(UnsupportedFilter)
    }
  })

  it('folds case one character to one, as the server', () => {
    expect(fold('ÄẞΣЖ')).toBe('äßσж')
    expect(fold('İ')).toBe('İ'.toLowerCase().length === 1 ? 'i' : 'İ')
  })
})
