import { describe, expect, it } from 'vitest'
import { components, layout, loopPath } from './matrix.js'

// Graphs worked by hand: the loops, their paths and the layers below are
// what a person drawing the matrix on paper finds.
const units = (...ids) => ids.map((id) => ({ id, label: 'US ' + id }))
const covers = (a, b) => ({ first: a, second: b, relation: 5 }) // a above b
const coveredBy = (a, b) => ({ first: a, second: b, relation: 1 }) // b above a
const succsOf = (ids, pairs) => {
  const m = new Map(ids.map((id) => [id, []]))
  for (const [u, v] of pairs) m.get(u).push(v)
  return m
}
const sorted = (cs) => cs.map((c) => [...c].sort((a, b) => a - b)).sort((a, b) => a[0] - b[0])

describe('strongly connected components', () => {
  it('finds each unit alone in a sequence', () => {
    expect(sorted(components([1, 2, 3], succsOf([1, 2, 3], [[1, 2], [2, 3]])))).toEqual([[1], [2], [3]])
  })
  it('finds a three-unit loop and leaves the unit below it alone', () => {
    // 1 → 2 → 3 → 1, 3 → 4
    expect(sorted(components([1, 2, 3, 4], succsOf([1, 2, 3, 4], [[1, 2], [2, 3], [3, 1], [3, 4]])))).toEqual([[1, 2, 3], [4]])
  })
  it('joins two loops that share a unit into one component', () => {
    // 1 ⇄ 2 and 2 ⇄ 3: one knot of three units
    const s = succsOf([1, 2, 3], [[1, 2], [2, 1], [2, 3], [3, 2]])
    expect(sorted(components([1, 2, 3], s))).toEqual([[1, 2, 3]])
  })
  it('keeps two separate loops apart', () => {
    // 1 ⇄ 2 above 3, 3 above 4 ⇄ 5
    const s = succsOf([1, 2, 3, 4, 5], [[1, 2], [2, 1], [2, 3], [3, 4], [4, 5], [5, 4]])
    expect(sorted(components([1, 2, 3, 4, 5], s))).toEqual([[1, 2], [3], [4, 5]])
  })
  it('does not overflow on a long sequence', () => {
    const ids = Array.from({ length: 20000 }, (_, i) => i)
    const s = succsOf(ids, ids.slice(1).map((i) => [i - 1, i]).concat([[19999, 0]]))
    expect(components(ids, s)).toHaveLength(1)
  })
})

describe('loop paths', () => {
  it('names the shortest way round from the first unit', () => {
    // 1 → 2 → 3 → 4 → 1 and a shortcut 2 → 4: the way round is 1, 2, 4
    const s = succsOf([1, 2, 3, 4], [[1, 2], [2, 3], [3, 4], [4, 1], [2, 4]])
    expect(loopPath([1, 2, 3, 4], s)).toEqual([1, 2, 4])
  })
  it('stays inside the loop', () => {
    // 1 → 5 → 1 is shorter but 5 is not given as a member
    const s = succsOf([1, 2, 3, 5], [[1, 2], [2, 3], [3, 1], [1, 5], [5, 1]])
    expect(loopPath([1, 2, 3], s)).toEqual([1, 2, 3])
  })
})

describe('Harris matrix layout with loops', () => {
  it('reports no loop in a clean sequence', () => {
    const g = layout(units(1, 2, 3), [covers(1, 2), covers(2, 3)])
    expect(g.loops).toEqual([])
    expect(g.edges.every((e) => !e.loop)).toBe(true)
  })
  it('lists a loop as a path, marks its edges and lays out the rest', () => {
    // 1 above 2, 2 above 3, 3 above 1 (written as 1 is covered by 3): a loop;
    // 4 below 3 and 0 above 1.
    const g = layout(units(0, 1, 2, 3, 4), [covers(0, 1), covers(1, 2), covers(2, 3), coveredBy(1, 3), covers(3, 4)])
    expect(g.loops).toHaveLength(1)
    expect(g.loops[0].units).toEqual([1, 2, 3])
    expect(g.loops[0].path).toEqual([1, 2, 3])
    expect(g.loops[0].edges).toEqual([{ from: 1, to: 2 }, { from: 2, to: 3 }, { from: 3, to: 1 }])
    const layer = Object.fromEntries(g.nodes.map((n) => [n.id, n.layer]))
    // The loop is one step of the sequence: 0 above it, 4 below it.
    expect(layer).toEqual({ 0: 0, 1: 1, 2: 1, 3: 1, 4: 2 })
    expect(g.edges.filter((e) => e.loop).map((e) => [e.from, e.to])).toEqual([[1, 2], [2, 3], [3, 1]])
    expect(g.edges.filter((e) => !e.loop).map((e) => [e.from, e.to])).toEqual([[0, 1], [3, 4]])
    expect(g.cycle).toEqual([1, 2, 3])
  })
  it('keeps a loop’s units side by side', () => {
    // 1 above 2, 3, 4; 2 ⇄ 4 a loop: 2 and 4 adjacent in their layer
    const g = layout(units(1, 2, 3, 4), [covers(1, 2), covers(1, 3), covers(1, 4), covers(2, 4), covers(4, 2)])
    const row = g.nodes.filter((n) => n.layer === 1).sort((a, b) => a.x - b.x).map((n) => n.id)
    expect(Math.abs(row.indexOf(2) - row.indexOf(4))).toBe(1)
  })
  it('reports two loops in the order of their first unit, and a unit above itself', () => {
    const g = layout(units(5, 6, 7, 8, 9), [covers(8, 9), covers(9, 8), covers(5, 6), covers(6, 5), covers(7, 7), covers(6, 7)])
    expect(g.loops.map((l) => l.path)).toEqual([[5, 6], [7], [8, 9]])
    expect(g.loops[1].edges).toEqual([{ from: 7, to: 7 }])
    const layer = Object.fromEntries(g.nodes.map((n) => [n.id, n.layer]))
    expect(layer[7]).toBe(layer[5] + 1)
  })
  it('does not count same-as relations as loops', () => {
    const g = layout(units(1, 2), [covers(1, 2), { first: 2, second: 1, relation: 9 }])
    expect(g.loops).toEqual([])
  })
})
