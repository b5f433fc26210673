// Geometry of the charts Strata draws itself (bars, lines, pies): a chart
// answer is a few hundred groups at most, which plain SVG shows well
// without a charting library in the bundle.

// niceMax rounds a maximum up to 1, 2 or 5 times a power of ten.
export function niceMax(v) {
  if (!(v > 0)) return 1
  const p = 10 ** Math.floor(Math.log10(v))
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p
  return 10 * p
}

// bars lays values out in [0, width] × [0, height] (y down), one slot each.
export function bars(values, width, height, gap = 0.2) {
  const max = niceMax(Math.max(0, ...values.map(Number).filter(Number.isFinite)))
  const slot = values.length ? width / values.length : width
  return {
    max,
    items: values.map((v, i) => {
      const h = Math.max(0, (Number(v) || 0) / max) * height
      return { x: i * slot + (slot * gap) / 2, w: slot * (1 - gap), y: height - h, h, cx: i * slot + slot / 2 }
    }),
  }
}

// arcs cuts a circle (or a ring, inner > 0) into slices proportional to
// the values; each slice is an SVG path around (cx, cy).
export function arcs(values, cx, cy, r, inner = 0) {
  const nums = values.map((v) => Math.max(0, Number(v) || 0))
  const total = nums.reduce((a, b) => a + b, 0)
  if (!total) return []
  let a0 = -Math.PI / 2
  return nums.map((v) => {
    const share = v / total
    const a1 = a0 + share * 2 * Math.PI
    const large = a1 - a0 > Math.PI ? 1 : 0
    const pt = (rad, a) => [cx + rad * Math.cos(a), cy + rad * Math.sin(a)].map((n) => n.toFixed(2)).join(' ')
    let d
    if (share >= 0.9999) {
      // A full circle cannot be one arc: two halves.
      d = `M ${pt(r, a0)} A ${r} ${r} 0 1 1 ${pt(r, a0 + Math.PI)} A ${r} ${r} 0 1 1 ${pt(r, a0)} Z`
    } else if (inner > 0) {
      d = `M ${pt(r, a0)} A ${r} ${r} 0 ${large} 1 ${pt(r, a1)} L ${pt(inner, a1)} A ${inner} ${inner} 0 ${large} 0 ${pt(inner, a0)} Z`
    } else {
      d = `M ${cx} ${cy} L ${pt(r, a0)} A ${r} ${r} 0 ${large} 1 ${pt(r, a1)} Z`
    }
    const mid = (a0 + a1) / 2
    a0 = a1
    return { d, share, mid }
  })
}
