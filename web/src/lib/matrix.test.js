import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { MAX_PATH, aboveBelow, components, layout, loopPath, parsePath, pathSteps, redundantPairs } from './matrix.js'

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

// The transitive reduction checked against a brute force: the closure by
// Floyd–Warshall over units, where "same as" joins both ways; a relation
// is redundant when its ends are in different parts (units not mutually
// reachable) and some unit of a third part lies between them.
function bruteRedundant(ids, relations) {
  const n = ids.length
  const at = new Map(ids.map((id, i) => [id, i]))
  const reach = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => i === j))
  const ab = relations.map((r) => {
    const a = at.get(r.first), b = at.get(r.second)
    const p = aboveBelow(r)
    if (!p) { reach[a][b] = true; reach[b][a] = true; return null }
    const e = [at.get(p[0]), at.get(p[1])]
    reach[e[0]][e[1]] = true
    return e
  })
  for (let k = 0; k < n; k++) for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (reach[i][k] && reach[k][j]) reach[i][j] = true
  const same = (a, b) => reach[a][b] && reach[b][a]
  const out = new Set()
  ab.forEach((e, i) => {
    if (!e) return
    const [u, v] = e
    if (same(u, v)) return
    for (let w = 0; w < n; w++) {
      if (same(w, u) || same(w, v)) continue
      if (reach[u][w] && reach[w][v]) { out.add(i); return }
    }
  })
  return out
}

// A small deterministic generator (no Math.random: a failure repeats).
function rng(seed) {
  let s = seed >>> 0
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32 }
}

describe('transitive reduction', () => {
  it('drops a relation implied by a longer way, and only that one', () => {
    // 1 above 2 above 3, and 1 above 3 recorded too: 1 above 3 is implied.
    const rels = [covers(1, 2), covers(2, 3), covers(1, 3)]
    expect([...redundantPairs([1, 2, 3], rels)]).toEqual([2])
  })
  it('reads both directions of recording', () => {
    // 3 is covered by 1 (relation 1: the second is later) is the same as 1 covers 3.
    const rels = [covers(1, 2), coveredBy(3, 2), coveredBy(3, 1)]
    expect([...redundantPairs([1, 2, 3], rels)]).toEqual([2])
  })
  it('keeps a pair stored both ways, and relations through different units of one class', () => {
    // 1 covers 2 and 2 is covered by 1 (BraDypUS's two rows): neither implied.
    expect([...redundantPairs([1, 2], [covers(1, 2), coveredBy(2, 1)])]).toEqual([])
    // 1 above 2 and 1 above 3, 2 the same as 3: one class below 1, two relations kept.
    expect([...redundantPairs([1, 2, 3], [covers(1, 2), covers(1, 3), { first: 2, second: 3, relation: 9 }])]).toEqual([])
  })
  it('follows ways through same-as classes', () => {
    // 1 above 2, 2 same as 3, 3 above 4: 1 above 4 is implied.
    const rels = [covers(1, 2), { first: 2, second: 3, relation: 9 }, covers(3, 4), covers(1, 4)]
    expect([...redundantPairs([1, 2, 3, 4], rels)]).toEqual([3])
  })
  it('treats a loop as one node', () => {
    // 1 above the loop 2 ⇄ 3, the loop above 4, and 1 above 4: implied.
    const rels = [covers(1, 2), covers(2, 3), covers(3, 2), covers(3, 4), covers(1, 4)]
    expect([...redundantPairs([1, 2, 3, 4], rels)]).toEqual([4])
  })
  it('agrees with the brute force on random matrices', () => {
    const next = rng(20261129)
    for (let round = 0; round < 300; round++) {
      const n = 2 + Math.floor(next() * 9)
      const ids = Array.from({ length: n }, (_, i) => 100 + i)
      const rels = []
      const count = Math.floor(next() * n * 2)
      for (let k = 0; k < count; k++) {
        const a = ids[Math.floor(next() * n)], b = ids[Math.floor(next() * n)]
        if (a === b) continue
        // Mostly acyclic (the upper unit the earlier id), sometimes not;
        // now and then a same-as.
        const x = next()
        const relation = x < 0.1 ? 9 : x < 0.2 ? 1 + Math.floor(next() * 8) : a < b ? 5 : 1
        rels.push({ first: a, second: b, relation })
      }
      const got = [...redundantPairs(ids, rels)].sort((p, q) => p - q)
      const want = [...bruteRedundant(ids, rels)].sort((p, q) => p - q)
      expect({ round, rels, got }).toEqual({ round, rels, got: want })
    }
  })
  it('flags the layout’s edges and keeps every edge', () => {
    const g = layout(units(1, 2, 3), [covers(1, 2), covers(2, 3), covers(1, 3)])
    expect(g.edges.map((e) => [e.from, e.to, e.redundant])).toEqual([[1, 2, false], [2, 3, false], [1, 3, true]])
    const layer = Object.fromEntries(g.nodes.map((n) => [n.id, n.layer]))
    expect(layer).toEqual({ 1: 0, 2: 1, 3: 2 })
  })
  it('handles a long sequence with a shortcut at every step', () => {
    const ids = Array.from({ length: 3000 }, (_, i) => i + 1)
    const rels = []
    for (let i = 1; i < ids.length; i++) rels.push(covers(i, i + 1))
    for (let i = 1; i + 2 <= ids.length; i++) rels.push(covers(i, i + 2))
    const r = redundantPairs(ids, rels)
    expect(r.size).toBe(ids.length - 2)
    expect([...r].every((i) => i >= ids.length - 1)).toBe(true)
  })
})

describe('paths from an address', () => {
  it('reads whole ids and ignores the rest', () => {
    expect(parsePath('12,15,9,12')).toEqual([12, 15, 9, 12])
    expect(parsePath('12, x,-3,1.5,,7')).toEqual([12, 7])
    expect(parsePath(undefined)).toEqual([])
    expect(parsePath(Array.from({ length: MAX_PATH + 5 }, (_, i) => i + 1).join(','))).toHaveLength(MAX_PATH)
  })
  it('matches a step whichever way its edge is drawn', () => {
    const s = pathSteps([12, 15, 9, 12])
    for (const k of ['12:15', '15:12', '15:9', '9:15', '9:12', '12:9']) expect(s.has(k)).toBe(true)
    expect(s.has('12:12')).toBe(false)
    expect(s.size).toBe(6)
  })
})

// Harris's own figure 12, as the stratigraphr package records it (the
// server's test data, core/matrix/testdata/harris12.csv): the figure is
// its own reduction, and with every order it implies recorded as well,
// the reduction drops exactly those.
describe('Harris figure 12', () => {
  const text = readFileSync(join(process.cwd(), '..', 'core', 'matrix', 'testdata', 'harris12.csv'), 'utf8') // vitest runs in web/
  const rows = text.split('\n').filter((l) => l && !l.startsWith('#')).slice(1)
    .map((l) => [...l.matchAll(/(?:"([^"]*)"|([^,]*))(?:,|$)/g)].map((m) => m[1] ?? m[2]).slice(0, 4))
  const ids = new Map()
  const id = (s) => { s = s.trim(); if (!ids.has(s)) ids.set(s, ids.size + 1); return ids.get(s) }
  const list = (s) => (s && s.trim() ? s.split(',') : [])
  const direct = []
  const seen = new Set()
  const add = (u, v) => { if (!seen.has(u + ':' + v)) { seen.add(u + ':' + v); direct.push(covers(u, v)) } }
  const same = []
  for (const [unit, above, below, equal] of rows) {
    const x = id(unit)
    list(above).forEach((a) => add(id(a), x))
    list(below).forEach((b) => add(x, id(b)))
    list(equal).forEach((e) => same.push({ first: x, second: id(e), relation: 9 }))
  }
  const all = [...ids.values()]
  it('reads the figure: 10 units, 12 relations, 7 the same as 8', () => {
    expect(all).toHaveLength(10)
    expect(same.map((r) => [r.first, r.second])).toEqual([[ids.get('7'), ids.get('8')], [ids.get('8'), ids.get('7')]])
    expect(direct).toHaveLength(12)
  })
  it('is its own reduction', () => {
    expect([...redundantPairs(all, [...direct, ...same])]).toEqual([])
  })
  it('drops exactly the 29 implied relations once they are recorded', () => {
    // Reachability by a plain walk down from each unit, through equal units.
    const down = new Map(all.map((u) => [u, []]))
    direct.forEach((r) => down.get(r.first).push(r.second))
    same.forEach((r) => { down.get(r.first).push(r.second); down.get(r.second).push(r.first) })
    const reach = (u) => { const s = new Set([u]); const st = [u]; while (st.length) for (const v of down.get(st.pop())) if (!s.has(v)) { s.add(v); st.push(v) } return s }
    const implied = []
    for (const u of all) {
      for (const v of reach(u)) {
        if (v === u || seen.has(u + ':' + v) || reach(v).has(u)) continue
        implied.push(covers(u, v))
      }
    }
    expect(implied).toHaveLength(29)
    const rels = [...direct, ...same, ...implied]
    const dropped = [...redundantPairs(all, rels)].sort((a, b) => a - b)
    const want = implied.map((_, i) => direct.length + same.length + i)
    expect(want.filter((i) => !dropped.includes(i)).map((i) => rels[i])).toEqual([])
    expect(dropped).toEqual(want)
  })
})
