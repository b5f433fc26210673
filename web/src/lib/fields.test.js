import { describe, expect, it } from 'vitest'
import { editorKind, fromWire, toWire } from './fields.js'
import { needsRefresh } from './api.js'
import { layout } from './matrix.js'
import { calBPToYear, niceTicks } from './plot.js'

describe('field kinds and values', () => {
  it('picks the editor from the type and storage', () => {
    const kinds = [
      [{ type: 'select', id_from_tb: 'units' }, 'lookup'], [{ type: 'md' }, 'markdown'], [{ type: 'long_text' }, 'textarea'],
      [{ type: 'boolean' }, 'boolean'], [{ type: 'date' }, 'date'], [{ type: 'slider' }, 'slider'],
      [{ type: 'multi_select', options_source: {} }, 'multi'], [{ type: 'select', options_source: { type: 'vocabulary' } }, 'select'],
      [{ type: 'text', db_type: 'float' }, 'number'], [{ type: 'text', db_type: 'int' }, 'number'], [{ type: 'text', db_type: 'text' }, 'text'],
      [{ type: 'link_out' }, 'url'],
      // A combo_select and a select allowing other values are typed into.
      [{ type: 'combo_select', options_source: { type: 'vocabulary' } }, 'suggest'],
      [{ type: 'select', vocab_free: true, options_source: { type: 'vocabulary' } }, 'suggest'],
      [{ type: 'select', vocab_free: false, options_source: { type: 'vocabulary' } }, 'select'],
    ]
    for (const [f, want] of kinds) expect(editorKind(f)).toBe(want)
  })

  it('converts values for the save and back', () => {
    expect(toWire('multi', ['a', 'b'])).toEqual(['a', 'b'])
    expect(fromWire('multi', '["a","b"]')).toEqual(['a', 'b'])
    expect(fromWire('multi', 'a; b')).toEqual(['a', 'b'])
    expect(fromWire('multi', null)).toEqual([])
    expect(toWire('boolean', true)).toBe(true)
    expect(fromWire('boolean', 1)).toBe(true)
    expect(toWire('number', null)).toBe('')
    expect(fromWire('text', null)).toBe('')
  })
})

describe('token refresh', () => {
  const now = Date.parse('2026-01-01T12:00:00Z')
  it('refreshes when less than 30 minutes remain, and not again for a minute after a try', () => {
    expect(needsRefresh({ expires_at: '2026-01-01T12:31:00Z' }, now)).toBe(false)
    expect(needsRefresh({ expires_at: '2026-01-01T12:29:00Z' }, now)).toBe(true)
    expect(needsRefresh({ expires_at: Math.floor(now / 1000) + 60 }, now)).toBe(true)
    expect(needsRefresh({ expires_at: '2026-01-01T12:29:00Z', refresh_tried_at: now - 10_000 }, now)).toBe(false)
    expect(needsRefresh({ expires_at: '2026-01-01T12:29:00Z', refresh_tried_at: now - 61_000 }, now)).toBe(true)
    expect(needsRefresh(null, now)).toBe(false)
  })
})

describe('Harris matrix layout', () => {
  it('puts later units above earlier ones, same-as apart', () => {
    const nodes = [1, 2, 3, 4].map((id) => ({ id, label: 'US ' + id }))
    // 1 covers 2 (5); 3 is cut by 2... i.e. 2 cuts 3 written from 3's side (2); 4 same as 3 (9)
    const g = layout(nodes, [{ first: 1, second: 2, relation: 5 }, { first: 3, second: 2, relation: 2 }, { first: 4, second: 3, relation: 9 }])
    const layer = Object.fromEntries(g.nodes.map((n) => [n.id, n.layer]))
    expect(layer[1]).toBe(0)
    expect(layer[2]).toBe(1)
    expect(layer[3]).toBe(2)
    expect(g.same).toHaveLength(1)
    expect(g.cycle).toEqual([])
  })
  it('still places units caught in contradictory relations', () => {
    const nodes = [1, 2].map((id) => ({ id, label: String(id) }))
    const g = layout(nodes, [{ first: 1, second: 2, relation: 5 }, { first: 2, second: 1, relation: 5 }])
    expect(g.nodes).toHaveLength(2)
    expect(g.cycle.sort()).toEqual([1, 2])
  })
})

describe('plot helpers', () => {
  it('turns cal BP into calendar years without a year 0', () => {
    expect(calBPToYear(0)).toBe(1950)
    expect(calBPToYear(1949)).toBe(1)
    expect(calBPToYear(1950)).toBe(-1)
    expect(calBPToYear(2300)).toBe(-351)
  })
  it('chooses round ticks', () => {
    expect(niceTicks(-410, -190, 4)).toEqual([-400, -300, -200])
    expect(niceTicks(-410, -190, 8)).toEqual([-400, -350, -300, -250, -200])
  })
})
