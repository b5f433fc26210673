import { describe, expect, it } from 'vitest'
import { CATEGORIES, categories, cycleSteps, cycleText, fixesOf, highlightPath, recordLabels } from './health.js'

// Items shaped as docs/api.md "Matrix check" gives them.
const report = {
  tb: 'us', units: 6, relations: 7, clean: false, limit: 500,
  skipped: { redundant: 'cycles' },
  problems: {
    cycle: { count: 1, truncated: false, items: [{ records: [{ id: 1, label: 'US1' }, { id: 2, label: 'US2' }, { id: 3, label: 'US3' }], relations: [10, 11, 12], path: [1, 2, 3, 1], remove: [12], size: { units: 3, relations: 3 } }] },
    missing_reciprocal: { count: 2, truncated: true, items: [
      { records: [{ id: 4, label: 'US4' }, { id: 5, label: 'US5' }], relations: [20], relation: { id: 20, first: 4, second: 5, relation: 5, relation_label: 'covers' }, add: { first: 5, second: 4, relation: 1 } },
    ] },
    dangling: { count: 1, truncated: false, items: [{ records: [{ id: 6, label: 'US6' }, { id: 99, label: null }], relations: [30], relation: { id: 30, first: 6, second: 99, relation: 5 }, missing: [99] }] },
    redundant: { count: 0, truncated: false, items: [] },
  },
}

describe('categories', () => {
  it('lists every category in order, with counts, truncation and skips', () => {
    const cs = categories(report)
    expect(cs.map((c) => c.kind)).toEqual(CATEGORIES)
    const by = Object.fromEntries(cs.map((c) => [c.kind, c]))
    expect(by.cycle.count).toBe(1)
    expect(by.missing_reciprocal).toMatchObject({ count: 2, truncated: true })
    expect(by.missing_reciprocal.items).toHaveLength(1)
    expect(by.redundant).toMatchObject({ count: 0, skipped: 'cycles' })
    expect(by.tpq_inversion).toMatchObject({ count: 0, skipped: null, items: [] })
  })
  it('reads an empty answer as nothing found', () => {
    expect(categories(null).every((c) => c.count === 0 && !c.items.length)).toBe(true)
  })
})

describe('highlightPath', () => {
  const item = (kind) => report.problems[kind].items[0]
  it('takes the path when the item has one', () => {
    expect(highlightPath('cycle', item('cycle'))).toEqual([1, 2, 3, 1])
    expect(highlightPath('period_inversion', { upper: 7, lower: 9, path: [7, 8, 9] })).toEqual([7, 8, 9])
  })
  it('falls back to the relation’s ends or the records left', () => {
    expect(highlightPath('redundant', { upper: 1, lower: 3, records: [] })).toEqual([1, 3])
    expect(highlightPath('missing_reciprocal', item('missing_reciprocal'))).toEqual([4, 5])
    expect(highlightPath('dangling', item('dangling'))).toEqual([6])
    expect(highlightPath('cycle', null)).toEqual([])
  })
})

describe('recordLabels and fixes', () => {
  it('maps each record named to its label, null when deleted', () => {
    const m = recordLabels(report)
    expect(m.get(1)).toBe('US1')
    expect(m.get(99)).toBeNull()
    expect(m.size).toBe(7)
  })
  it('builds one fix a listed missing reciprocal, bounded', () => {
    expect(fixesOf(report)).toEqual([{ kind: 'missing_reciprocal', relation_id: 20 }])
    const many = { problems: { missing_reciprocal: { items: Array.from({ length: 5 }, (_, i) => ({ relation: { id: i + 1 } })) } } }
    expect(fixesOf(many, 3).map((f) => f.relation_id)).toEqual([1, 2, 3])
    expect(fixesOf({})).toEqual([])
  })
})

describe('a refused relation’s cycle', () => {
  it('keeps visible units and hides the others', () => {
    const steps = cycleSteps({ code: 'rs_cycle', path: [{ id: 12, label: 'US12' }, { hidden: true }, { id: 9, label: null }, { id: 12, label: 'US12' }], path_text: 'US12 → … → #9 → US12' })
    expect(steps).toEqual([{ id: 12, label: 'US12' }, { hidden: true }, { id: 9, label: '#9' }, { id: 12, label: 'US12' }])
    expect(cycleText(steps)).toBe('US12 → … → #9 → US12')
  })
  it('gives no steps without a path', () => {
    expect(cycleSteps({ code: 'rs_cycle' })).toEqual([])
    expect(cycleSteps(undefined)).toEqual([])
  })
})
