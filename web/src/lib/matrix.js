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

// layout places nodes by longest-path layering (a unit sits one layer
// below the lowest of the units above it), then orders each layer by the
// mean position of its neighbours above (a few barycentre sweeps) to
// untangle the lines. A cycle (contradictory relations) is broken where
// it is found; its units still get a layer and cycle lists them.
export function layout(nodes, relations, { w = 90, h = 34, gx = 24, gy = 40 } = {}) {
  const ids = nodes.map((n) => n.id)
  const preds = new Map(ids.map((id) => [id, []]))
  const succs = new Map(ids.map((id) => [id, []]))
  const edges = []
  const same = []
  for (const r of relations) {
    if (!preds.has(r.first) || !preds.has(r.second)) continue
    const ab = aboveBelow(r)
    if (!ab) { same.push({ from: r.first, to: r.second, relation: r.relation }); continue }
    const [u, v] = ab
    if (u === v) continue
    edges.push({ from: u, to: v, relation: r.relation })
    succs.get(u).push(v)
    preds.get(v).push(u)
  }
  // Kahn's order; what remains is in a cycle.
  const indeg = new Map(ids.map((id) => [id, preds.get(id).length]))
  const layer = new Map()
  const queue = ids.filter((id) => indeg.get(id) === 0)
  queue.forEach((id) => layer.set(id, 0))
  const order = []
  while (queue.length) {
    const u = queue.shift()
    order.push(u)
    for (const v of succs.get(u)) {
      layer.set(v, Math.max(layer.get(v) ?? 0, layer.get(u) + 1))
      indeg.set(v, indeg.get(v) - 1)
      if (indeg.get(v) === 0) queue.push(v)
    }
  }
  const cycle = ids.filter((id) => !order.includes(id))
  const maxLayer = Math.max(0, ...layer.values())
  for (const id of cycle) layer.set(id, (layer.get(id) ?? maxLayer) + 1)

  const layers = []
  for (const id of ids) {
    const l = layer.get(id)
    ;(layers[l] ||= []).push(id)
  }
  const pos = new Map()
  const place = () => layers.forEach((row, l) => row?.forEach((id, i) => pos.set(id, { l, i })))
  place()
  for (let sweep = 0; sweep < 4; sweep++) {
    for (let l = 1; l < layers.length; l++) {
      if (!layers[l]) continue
      const bary = (id) => {
        const ps = preds.get(id).filter((p) => pos.get(p)?.l === l - 1)
        return ps.length ? ps.reduce((s, p) => s + pos.get(p).i, 0) / ps.length : pos.get(id).i
      }
      layers[l].sort((a, b) => bary(a) - bary(b))
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
  return { nodes: placed, edges, same, cycle, width, height: layers.length * (h + gy) + gy / 2 }
}
