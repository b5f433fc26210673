// Layout of a Harris matrix: units in layers, the latest at the top.
// Relation codes (docs/api.md): 1 is covered by, 2 is cut by, 3 carries,
// 4 is filled by — the second unit is later; 5 covers, 6 cuts, 7 leans
// against, 8 fills — the first is later; 9 is the same as and 10 is bound
// to join units of one time.

// aboveBelow turns a relation into [later, earlier], or null for 9 and 10.
export function aboveBelow(r) {
  if (r.relation >= 1 && r.relation <= 4) return [r.second, r.first]
  if (r.relation >= 5 && r.relation <= 8) return [r.first, r.second]
  return null
}

// components returns the strongly connected components of the graph
// (ids, succs: id → ids below it), Tarjan's algorithm without recursion so
// a deep sequence of thousands of units cannot overflow the stack. A
// component of more than one unit, or of one unit above itself, is a loop:
// contradictory relations, since no unit can be later than itself.
export function components(ids, succs) {
  const index = new Map(), low = new Map(), onStack = new Set(), stack = [], out = []
  let next = 0
  for (const root of ids) {
    if (index.has(root)) continue
    const work = [[root, 0]]
    index.set(root, next); low.set(root, next); next++
    stack.push(root); onStack.add(root)
    while (work.length) {
      const frame = work[work.length - 1]
      const [u, i] = frame
      const vs = succs.get(u) || []
      if (i < vs.length) {
        frame[1]++
        const v = vs[i]
        if (!index.has(v)) {
          index.set(v, next); low.set(v, next); next++
          stack.push(v); onStack.add(v)
          work.push([v, 0])
        } else if (onStack.has(v)) {
          low.set(u, Math.min(low.get(u), index.get(v)))
        }
        continue
      }
      work.pop()
      if (work.length) {
        const p = work[work.length - 1][0]
        low.set(p, Math.min(low.get(p), low.get(u)))
      }
      if (low.get(u) === index.get(u)) {
        const comp = []
        let w
        do { w = stack.pop(); onStack.delete(w); comp.push(w) } while (w !== u)
        out.push(comp)
      }
    }
  }
  return out
}

// loopPath is the shortest way round a loop: from its first unit (in
// ids order) down through units of the loop only and back to it, as the
// list of units passed, the first not repeated at the end. A breadth-first
// search, so a loop of three units is named by three, not by a longer
// detour through the same units.
export function loopPath(members, succs) {
  const inLoop = new Set(members)
  const start = members[0]
  const from = new Map([[start, null]])
  const queue = [start]
  while (queue.length) {
    const u = queue.shift()
    for (const v of succs.get(u) || []) {
      if (!inLoop.has(v)) continue
      if (v === start) {
        const path = [u]
        for (let p = from.get(u); p !== null; p = from.get(p)) path.push(p)
        return path.reverse()
      }
      if (!from.has(v)) { from.set(v, u); queue.push(v) }
    }
  }
  return [start] // unreachable for a true loop
}

// redundantPairs finds the relations the Harris matrix leaves out: an
// above/below relation implied by a longer way of others (the transitive
// reduction, as the server's check reports them under `redundant`). Units
// recorded as one (9 and 10, directly or through others) are one class,
// and classes in a loop one node, so the reduction is taken over that
// acyclic graph: a relation is redundant when its two nodes are also
// joined by a way through a third. Two relations between the same nodes
// (a pair stored both ways, or through different units of one class) are
// each kept. It is computed here, from the relations the matrix already
// has, rather than from the report: the report lists at most 500 items,
// skips the reduction while the matrix has a cycle, and may be a job.
// Returns the set of indices (into relations) that are redundant.
export function redundantPairs(ids, relations) {
  const idx = new Map(ids.map((id, i) => [id, i]))
  const n = ids.length
  // Same-as classes: union-find with path halving.
  const parent = Int32Array.from({ length: n }, (_, i) => i)
  const find = (x) => { while (parent[x] !== x) { parent[x] = parent[parent[x]]; x = parent[x] } return x }
  const ab = relations.map((r) => {
    const a = idx.get(r.first), b = idx.get(r.second)
    if (a === undefined || b === undefined) return null
    const pair = aboveBelow(r)
    if (!pair) { parent[find(a)] = find(b); return null }
    return [idx.get(pair[0]), idx.get(pair[1])]
  })
  const cls = Int32Array.from({ length: n }, (_, i) => find(i))
  // Loops over the classes: one node each (components, as layout finds them).
  const classSuccs = new Map()
  const reps = [...new Set(cls)]
  for (const c of reps) classSuccs.set(c, [])
  for (const e of ab) if (e && cls[e[0]] !== cls[e[1]]) classSuccs.get(cls[e[0]]).push(cls[e[1]])
  const node = new Int32Array(n)
  const comps = components(reps, classSuccs)
  comps.forEach((c, k) => { for (const x of c) node[x] = k })
  const nodeOf = (i) => node[cls[i]]
  // The acyclic graph of nodes, each successor once, and a topological
  // order (components lists them with every node after the nodes below it).
  const m = comps.length
  const succ = Array.from({ length: m }, () => new Set())
  for (const e of ab) if (e && nodeOf(e[0]) !== nodeOf(e[1])) succ[nodeOf(e[0])].add(nodeOf(e[1]))
  const topo = new Int32Array(m)
  for (let k = 0; k < m; k++) topo[k] = m - 1 - k
  // For each node, its successors nearest first (lowest topological
  // index): a successor already reached from a nearer one is implied.
  // The walk stops past the farthest successor, which nothing beyond can
  // reach, and marks with a stamp per node instead of a new set.
  const seen = new Int32Array(m).fill(-1)
  const implied = new Set() // u * m + v
  const stack = []
  for (let u = 0; u < m; u++) {
    const kids = [...succ[u]].sort((a, b) => topo[a] - topo[b])
    if (kids.length < 2) continue
    const far = topo[kids[kids.length - 1]]
    for (const k of kids) {
      if (seen[k] === u) { implied.add(u * m + k); continue }
      stack.push(k)
      while (stack.length) {
        const x = stack.pop()
        for (const y of succ[x]) {
          if (seen[y] === u || topo[y] > far) continue
          seen[y] = u
          stack.push(y)
        }
      }
    }
  }
  const out = new Set()
  ab.forEach((e, i) => {
    if (!e) return
    const u = nodeOf(e[0]), v = nodeOf(e[1])
    if (u !== v && implied.has(u * m + v)) out.add(i)
  })
  return out
}

// MAX_PATH bounds a highlighted path read from an address.
export const MAX_PATH = 1000

// parsePath reads a path of unit ids from an address's query
// (?path=12,15,9,12): whole positive numbers only, at most MAX_PATH.
export function parsePath(q) {
  if (typeof q !== 'string' || !q) return []
  const out = []
  for (const part of q.split(',')) {
    if (!/^\d{1,15}$/.test(part.trim())) continue
    out.push(Number(part.trim()))
    if (out.length >= MAX_PATH) break
  }
  return out
}

// pathSteps are the consecutive pairs of a path, as keys that match an
// edge whichever way it is drawn ("12:15" and "15:12" alike).
export function pathSteps(path) {
  const keys = new Set()
  for (let i = 1; i < path.length; i++) {
    if (path[i - 1] === path[i]) continue
    keys.add(path[i - 1] + ':' + path[i])
    keys.add(path[i] + ':' + path[i - 1])
  }
  return keys
}

// layout places nodes by longest-path layering (a unit sits one layer
// below the lowest of the units above it; redundant relations, flagged on
// their edges, never change it: a longer way already sets the layer),
// then orders each layer by the
// mean position of its neighbours above (a few barycentre sweeps) to
// untangle the lines. Loops (contradictory relations) are found first
// (components): the units of one loop share a layer, the edges inside it
// are left out of the layering and listed in loops with the path round
// it, so the rest of the matrix is drawn as if the loop were one unit and
// the page can show the problem instead of crossing lines.
export function layout(nodes, relations, { w = 90, h = 34, gx = 24, gy = 40 } = {}) {
  const ids = nodes.map((n) => n.id)
  const preds = new Map(ids.map((id) => [id, []]))
  const succs = new Map(ids.map((id) => [id, []]))
  const edges = []
  const same = []
  const selfLoops = new Set()
  const implied = redundantPairs(ids, relations)
  relations.forEach((r, i) => {
    if (!preds.has(r.first) || !preds.has(r.second)) return
    const ab = aboveBelow(r)
    if (!ab) { same.push({ id: r.id, from: r.first, to: r.second, relation: r.relation }); return }
    const [u, v] = ab
    if (u === v) { selfLoops.add(u); return }
    edges.push({ id: r.id, from: u, to: v, relation: r.relation, redundant: implied.has(i) })
    succs.get(u).push(v)
    // The order of a layer follows the lines drawn: an implied relation
    // (left out of the drawing) does not pull its lower unit.
    if (!implied.has(i)) preds.get(v).push(u)
  })
  // Loops, in the order of their first unit in ids.
  const pos0 = new Map(ids.map((id, i) => [id, i]))
  const comp = new Map()
  const loops = []
  for (const c of components(ids, succs)) {
    c.sort((a, b) => pos0.get(a) - pos0.get(b))
    c.forEach((id) => comp.set(id, c[0]))
    if (c.length > 1 || selfLoops.has(c[0])) loops.push({ units: c, path: c.length > 1 ? loopPath(c, succs) : [c[0]] })
  }
  loops.sort((a, b) => pos0.get(a.units[0]) - pos0.get(b.units[0]))
  for (const e of edges) e.loop = comp.get(e.from) === comp.get(e.to)
  for (const l of loops) l.edges = l.path.map((u, i) => ({ from: u, to: l.path[(i + 1) % l.path.length] }))
  // Kahn's order over the components (each loop one node), so every unit
  // gets a layer and nothing is left over.
  const reps = ids.filter((id) => comp.get(id) === id)
  const cSuccs = new Map(reps.map((r) => [r, new Set()]))
  for (const e of edges) if (!e.loop) cSuccs.get(comp.get(e.from)).add(comp.get(e.to))
  const indeg = new Map(reps.map((r) => [r, 0]))
  for (const s of cSuccs.values()) for (const v of s) indeg.set(v, indeg.get(v) + 1)
  const cLayer = new Map()
  const queue = reps.filter((r) => indeg.get(r) === 0)
  queue.forEach((r) => cLayer.set(r, 0))
  while (queue.length) {
    const u = queue.shift()
    for (const v of cSuccs.get(u)) {
      cLayer.set(v, Math.max(cLayer.get(v) ?? 0, cLayer.get(u) + 1))
      indeg.set(v, indeg.get(v) - 1)
      if (indeg.get(v) === 0) queue.push(v)
    }
  }
  const layer = new Map(ids.map((id) => [id, cLayer.get(comp.get(id))]))
  const cycle = loops.flatMap((l) => l.units)

  // A loop's units enter their layer together, at its first unit.
  const members = new Map(loops.map((l) => [l.units[0], l.units]))
  const layers = []
  for (const id of ids) {
    if (comp.get(id) !== id) continue
    ;(layers[layer.get(id)] ||= []).push(...(members.get(id) || [id]))
  }
  const pos = new Map()
  const place = () => layers.forEach((row, l) => row?.forEach((id, i) => pos.set(id, { l, i })))
  place()
  for (let sweep = 0; sweep < 4; sweep++) {
    for (let l = 1; l < layers.length; l++) {
      if (!layers[l]) continue
      // A loop's units move together (the mean over all of them), so
      // they stay side by side and its lines do not cross other units.
      const sum = new Map(), count = new Map()
      for (const id of layers[l]) {
        const c = comp.get(id)
        const ps = preds.get(id).filter((p) => pos.get(p)?.l === l - 1)
        sum.set(c, (sum.get(c) ?? 0) + (ps.length ? ps.reduce((s, p) => s + pos.get(p).i, 0) / ps.length : pos.get(id).i))
        count.set(c, (count.get(c) ?? 0) + 1)
      }
      const bary = (id) => sum.get(comp.get(id)) / count.get(comp.get(id))
      layers[l].sort((a, b) => bary(a) - bary(b) || pos0.get(comp.get(a)) - pos0.get(comp.get(b)) || pos0.get(a) - pos0.get(b))
      layers[l].forEach((id, i) => pos.set(id, { l, i }))
    }
  }
  const widest = Math.max(1, ...layers.map((r) => r?.length || 0))
  const width = widest * (w + gx) + gx
  const byId = new Map(nodes.map((n) => [n.id, n]))
  const placed = []
  layers.forEach((row, l) => {
    if (!row) return
    const offset = (width - row.length * (w + gx) + gx) / 2
    row.forEach((id, i) => placed.push({ ...byId.get(id), x: offset + i * (w + gx), y: gy / 2 + l * (h + gy), w, h, layer: l }))
  })
  return { nodes: placed, edges, same, cycle, loops, width, height: layers.length * (h + gy) + gy / 2 }
}
