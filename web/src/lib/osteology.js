// The osteology inventory drawn as a body: each region of GET
// /osteology/summary is a set of shapes on a schematic skeleton, shaded by
// how much of the region is present. The catalogue (GET /osteology/schema)
// gives how many elements a region has.

// Shapes of a 120 × 260 figure, by region id. Paired regions have two
// shapes (right of the individual on the viewer's left, as anatomical
// drawings are read).
export const SHAPES = {
  thorax: [{ kind: 'ellipse', cx: 60, cy: 80, rx: 24, ry: 24 }],
  head: [{ kind: 'ellipse', cx: 60, cy: 22, rx: 16, ry: 19 }],
  teeth: [{ kind: 'rect', x: 50, y: 32, w: 20, h: 7 }],
  shoulder: [{ kind: 'rect', x: 28, y: 48, w: 64, h: 8 }],
  spine: [{ kind: 'rect', x: 57, y: 44, w: 6, h: 86 }],
  upper_limb: [{ kind: 'rect', x: 17, y: 58, w: 10, h: 82 }, { kind: 'rect', x: 93, y: 58, w: 10, h: 82 }],
  pelvis: [{ kind: 'ellipse', cx: 60, cy: 138, rx: 25, ry: 11 }],
  lower_limb: [{ kind: 'rect', x: 43, y: 151, w: 11, h: 88 }, { kind: 'rect', x: 66, y: 151, w: 11, h: 88 }],
  foot: [{ kind: 'rect', x: 35, y: 242, w: 19, h: 9 }, { kind: 'rect', x: 66, y: 242, w: 19, h: 9 }],
}

// sizes counts the catalogue's elements per region. Teeth count the
// permanent dentition only (FDI quadrants 1–4): deciduous teeth are an
// alternative set, not more of the same mouth.
export function sizes(schema) {
  const out = {}
  for (const el of schema?.elements || []) {
    if (el.fdi && Math.floor(el.fdi / 10) > 4) continue
    out[el.region] = (out[el.region] || 0) + 1
  }
  return out
}

// level is the shade of a region, 0 (nothing present) to 4 (all of it);
// -1 when nothing of it was recorded at all.
export function level(region, total) {
  if (!region || !region.recorded) return -1
  if (!region.present) return 0
  const share = total ? region.present / total : 1
  return Math.max(1, Math.min(4, Math.ceil(share * 4)))
}
