import { describe, expect, it } from 'vitest'
import { arcs, bars, niceMax } from './chart.js'

describe('chart geometry', () => {
  it.each([[0, 1], [7, 10], [12, 20], [45, 50], [100, 100], [101, 200], [0.3, 0.5]])('rounds %f up to %f', (v, want) => {
    expect(niceMax(v)).toBeCloseTo(want)
  })
  it('scales bars to the rounded maximum', () => {
    const { max, items } = bars([5, 10, 0], 300, 100)
    expect(max).toBe(10)
    expect(items.map((b) => b.h)).toEqual([50, 100, 0])
    expect(items[1].y).toBe(0)
    expect(items[2].x).toBeCloseTo(210)
  })
  it('cuts slices in proportion', () => {
    const s = arcs([1, 3], 50, 50, 40)
    expect(s.map((x) => x.share)).toEqual([0.25, 0.75])
    expect(s[0].d.startsWith('M 50 50 L 50.00 10.00')).toBe(true)
    expect(arcs([0, 0], 50, 50, 40)).toEqual([])
    expect(arcs([5], 50, 50, 40)[0].d).toContain('A 40 40 0 1 1')
  })
})
