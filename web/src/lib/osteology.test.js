import { describe, expect, it } from 'vitest'
import { SHAPES, level, sizes } from './osteology.js'

describe('osteology', () => {
  it('counts the permanent teeth only', () => {
    const schema = { elements: [
      { id: 'femur_right', region: 'lower_limb' }, { id: 'femur_left', region: 'lower_limb' },
      { id: 'tooth_11', region: 'teeth', fdi: 11 }, { id: 'tooth_48', region: 'teeth', fdi: 48 },
      { id: 'tooth_51', region: 'teeth', fdi: 51 },
    ] }
    expect(sizes(schema)).toEqual({ lower_limb: 2, teeth: 2 })
    expect(sizes(null)).toEqual({})
  })
  it.each([
    [{ recorded: 0, present: 0 }, 10, -1],
    [{ recorded: 3, present: 0 }, 10, 0],
    [{ recorded: 3, present: 1 }, 10, 1],
    [{ recorded: 6, present: 5 }, 10, 2],
    [{ recorded: 10, present: 10 }, 10, 4],
    [{ recorded: 2, present: 2 }, 0, 4],
  ])('shades %o of %i as %i', (r, total, want) => {
    expect(level(r, total)).toBe(want)
  })
  it('draws every region of the catalogue', () => {
    for (const r of ['head', 'spine', 'thorax', 'shoulder', 'upper_limb', 'pelvis', 'lower_limb', 'foot', 'teeth']) {
      expect(SHAPES[r]?.length).toBeGreaterThan(0)
    }
  })
})
