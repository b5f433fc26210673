// Years on a time axis. Strata's chronology stores signed years with no
// year 0 (−1 is 1 BCE, 1 is 1 CE; PLUGINS.md §13), and a bound may be open
// (null: ante or post quem). The axis works on a continuous scale where
// year y sits at y (CE) or y+1 (BCE), so 1 BCE and 1 CE are one year apart.

import { t as tr } from './i18n.js'

// Era words in the interface's language ("BCE"/"CE", "a.C."/"d.C.").
const bce = () => tr('era.bce')
const ce = () => tr('era.ce')

// pos is a year's place on the continuous scale.
export function pos(year) { return year < 0 ? year + 1 : year }

// yearText writes a signed year: "325 BCE", "12 CE".
export function yearText(year) {
  if (year === null || year === undefined || year === '') return ''
  const y = Number(year)
  return y < 0 ? `${-y} ${bce()}` : `${y} ${ce()}`
}

// spanText writes a dating: "325–301 BCE", "c. 50 BCE – 20 CE", open sides
// as "… 300 CE" (ante quem) and "200 BCE …" (post quem).
export function spanText(from, to) {
  const f = from === null || from === undefined ? null : Number(from)
  const t = to === null || to === undefined ? null : Number(to)
  if (f === null && t === null) return ''
  if (f === null) return `… ${yearText(t)}`
  if (t === null) return `${yearText(f)} …`
  if (f === t) return yearText(f)
  if (f < 0 && t < 0) return `${-f}–${-t} ${bce()}`
  if (f > 0 && t > 0) return `${f}–${t} ${ce()}`
  return `${yearText(f)} – ${yearText(t)}`
}

const STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000]

// ticks chooses round years for an axis over [lo, hi] (continuous scale)
// with about `count` marks: returns signed years (never 0).
export function ticks(lo, hi, count = 6) {
  if (!(hi > lo)) return [lo <= 0 ? lo - 1 : lo]
  const raw = (hi - lo) / Math.max(1, count)
  const step = STEPS.find((s) => s >= raw) || STEPS[STEPS.length - 1]
  const out = []
  for (let p = Math.ceil(lo / step) * step; p <= hi; p += step) {
    // Round years read better than exact places: a BCE tick is drawn one
    // year off (invisible at any step the axis uses), and the BCE/CE
    // boundary, place 0, is written as 1 CE.
    out.push(p === 0 ? 1 : p)
  }
  return out
}

// extent is the window of a set of datings on the continuous scale, with a
// margin; open bounds do not stretch it. `fallback` sizes a window around a
// single year.
export function extent(spans, margin = 0.05) {
  const ys = []
  for (const s of spans) {
    if (s.from !== null && s.from !== undefined) ys.push(pos(Number(s.from)))
    if (s.to !== null && s.to !== undefined) ys.push(pos(Number(s.to)) + 1)
  }
  if (!ys.length) return null
  let lo = Math.min(...ys)
  let hi = Math.max(...ys)
  const pad = Math.max(10, (hi - lo) * margin)
  lo -= pad
  hi += pad
  return [lo, hi]
}

// scale maps the continuous scale [lo, hi] onto [x0, x1] pixels.
export function scale(lo, hi, x0, x1) {
  return (p) => x0 + ((p - lo) / (hi - lo)) * (x1 - x0)
}

// barOf is where a dating sits: its left and right places (an open bound
// runs to the window's edge) and which sides are open.
export function barOf(from, to, [lo, hi]) {
  const openLeft = from === null || from === undefined
  const openRight = to === null || to === undefined
  return {
    left: openLeft ? lo : pos(Number(from)),
    right: openRight ? hi : pos(Number(to)) + 1,
    openLeft,
    openRight,
  }
}
