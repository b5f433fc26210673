import { describe, expect, it } from 'vitest'
import { barOf, extent, pos, spanText, ticks, yearText } from './chrono.js'

describe('chrono', () => {
  it('puts 1 BCE and 1 CE one year apart', () => {
    expect(pos(1) - pos(-1)).toBe(1)
    expect(pos(-325)).toBe(-324)
  })
  it.each([
    [-325, -301, '325–301 BCE'],
    [-50, 20, '50 BCE – 20 CE'],
    [1, 100, '1–100 CE'],
    [null, 300, '… 300 CE'],
    [-200, null, '200 BCE …'],
    [12, 12, '12 CE'],
    [null, null, ''],
  ])('writes %s…%s as %s', (f, t, want) => {
    expect(spanText(f, t)).toBe(want)
  })
  it('writes years', () => {
    expect(yearText(-1)).toBe('1 BCE')
    expect(yearText('44')).toBe('44 CE')
    expect(yearText(null)).toBe('')
  })
  it('chooses round ticks and never year 0', () => {
    const tk = ticks(-524, 176, 7)
    expect(tk).not.toContain(0)
    expect(tk).toEqual([-500, -400, -300, -200, -100, 1, 100])
  })
  it('sizes the window without the open bounds', () => {
    const [lo, hi] = extent([{ from: -325, to: -301 }, { from: null, to: 100 }])
    expect(lo).toBeLessThan(pos(-325))
    expect(hi).toBeGreaterThan(101)
    expect(extent([{ from: null, to: null }])).toBeNull()
    const bar = barOf(null, 100, [lo, hi])
    expect(bar).toEqual({ left: lo, right: 101, openLeft: true, openRight: false })
  })
})
