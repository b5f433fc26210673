// The chronological model screen's pure parts (the sequence plugin, issue
// 33): where a run's estimates sit on a common calendar axis, the SVG
// paths of their densities, the order they are listed in (as a Harris
// matrix reads: the latest at the top), and how a run's job answer is
// unwrapped. Years are signed with no year 0 (−1 is 1 BCE), as the
// plugin's; they are placed with chrono.js's pos so 1 BCE and 1 CE sit
// one year apart.
import { ApiError } from './api.js'
import { pos } from './chrono.js'
import { waitJob } from './jobs.js'

// OUTLIER_BELOW: OxCal's 60 % agreement, below which a date is flagged
// (the plugin's model.OutlierThreshold; the result's `outlier` says it,
// this only names the line drawn on the agreement scale).
export const OUTLIER_BELOW = 60

// extent is the calendar span [x0, x1] (pos scale) every plot of a result
// shares, so dates and boundaries compare at a glance, OxCal's multiplot
// way: the dates' likelihoods and posteriors, and the boundaries' 95.4 %
// ranges (a boundary's density may trail far into the prior's span; its
// range is what matters), with 2 % margin each side. Null when there is
// nothing to plot.
export function extent(result) {
  let lo = Infinity
  let hi = -Infinity
  const take = (y) => { const x = pos(y); if (x < lo) lo = x; if (x > hi) hi = x }
  for (const d of result?.dates || []) {
    for (const s of [d.likelihood, d.posterior]) {
      if (!s?.density?.length) continue
      const step = s.step || 1
      take(s.density[0].year)
      // A point holds `step` years from its year towards the present.
      take(s.density[s.density.length - 1].year + step - 1)
    }
  }
  for (const b of result?.boundaries || []) {
    for (const r of b.posterior?.hpd95 || []) { take(r.from); take(r.to) }
  }
  if (!(hi >= lo)) return null
  const pad = Math.max(5, Math.round((hi - lo) * 0.02))
  return [lo - pad, hi + pad]
}

// scale maps [d0, d1] onto [r0, r1] linearly.
export function scale(d0, d1, r0, r1) {
  const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0)
  return (v) => r0 + (v - d0) * k
}

// points are a summary's density as [x, y] in the plot: sx takes a year on
// the pos scale, sy a probability; the points outside [x0, x1] (a
// boundary's long tail) are left out. A point holding `step` years is
// drawn at the middle of its years.
export function points(summary, sx, sy, [x0, x1] = [-Infinity, Infinity]) {
  const step = summary?.step || 1
  const out = []
  for (const d of summary?.density || []) {
    const x = pos(d.year) + (step - 1) / 2
    if (x < x0 || x > x1) continue
    out.push([sx(x), sy(d.p)])
  }
  return out
}

const f1 = (v) => (Math.round(v * 10) / 10).toString()

// linePath is the outline through the points ('' when there are none).
export function linePath(pts) {
  if (!pts.length) return ''
  return pts.map(([x, y], i) => `${i ? 'L' : 'M'}${f1(x)},${f1(y)}`).join(' ')
}

// areaPath is the area between the points and the baseline, closed.
export function areaPath(pts, base) {
  if (!pts.length) return ''
  const p = pts.length === 1 ? [pts[0], [pts[0][0] + 0.5, pts[0][1]]] : pts
  return `M${f1(p[0][0])},${f1(base)} ` + p.map(([x, y]) => `L${f1(x)},${f1(y)}`).join(' ') + ` L${f1(p[p.length - 1][0])},${f1(base)} Z`
}

// peak is the highest probability of the summaries given (0 for none).
export function peak(...summaries) {
  let m = 0
  for (const s of summaries) for (const d of s?.density || []) if (d.p > m) m = d.p
  return m
}

// bars are the ranges (from ≤ to, both years included) as [x, width] in
// the plot, at least 1.5 wide so a one-year range still shows.
export function bars(ranges, sx) {
  return (ranges || []).map((r) => {
    const a = sx(pos(r.from))
    const b = sx(pos(r.to) + 1)
    return { x: a, w: Math.max(1.5, b - a), from: r.from, to: r.to, p: r.p }
  })
}

// phaseOrder names the model's phases oldest first from its boundaries
// (in sequence order, oldest first): "Start P", "P/Q" (contiguous) and
// "End P". A transition's name is the older phase's, a slash and the
// younger's, so the younger is read after the phase before it, whatever
// slashes the names hold.
export function phaseOrder(boundaries) {
  const out = []
  const add = (n) => { if (n && !out.includes(n)) out.push(n) }
  for (const b of boundaries || []) {
    if (b.kind === 'start' && b.name.startsWith('Start ')) add(b.name.slice(6))
    else if (b.kind === 'end' && b.name.startsWith('End ')) add(b.name.slice(4))
    else if (b.kind === 'transition') {
      const prev = out[out.length - 1]
      if (prev !== undefined && b.name.startsWith(prev + '/')) add(b.name.slice(prev.length + 1))
    }
  }
  return out
}

// The mean of an estimate's posterior in cal BP: larger is older.
const age = (e) => e?.posterior?.mean_cal_bp ?? 0

// rows lists a result as a matrix reads, the latest at the top: each
// phase's boundaries around its dates (a header row names the phase), the
// dates of a phase youngest first; dates in no phase (or all of them, in
// a model without phases) in one group under a header of phase null.
// Each row is {kind: 'phase'|'boundary'|'date', phase, estimate?}.
export function rows(result) {
  const dates = result?.dates || []
  const bounds = result?.boundaries || []
  const phases = phaseOrder(bounds)
  const byPhase = new Map(phases.map((p) => [p, []]))
  const loose = []
  for (const d of dates) (byPhase.get(d.phase) || loose).push(d)
  const oldestFirst = []
  const group = (p, list) => {
    oldestFirst.push(...[...list].sort((a, b) => age(b) - age(a)).map((e) => ({ kind: 'date', phase: p, estimate: e })))
    oldestFirst.push({ kind: 'phase', phase: p })
  }
  if (loose.length) group(null, loose)
  const shown = new Set()
  for (const b of bounds) {
    oldestFirst.push({ kind: 'boundary', phase: null, estimate: b })
    // After the boundary that opens a phase, the phase's dates.
    let opens = null
    if (b.kind === 'start') opens = b.name.slice(6)
    else if (b.kind === 'transition') opens = phases.find((p, i) => i > 0 && b.name === phases[i - 1] + '/' + p) ?? null
    if (opens !== null && byPhase.has(opens) && !shown.has(opens)) { shown.add(opens); group(opens, byPhase.get(opens)) }
  }
  // A phase whose opening boundary was not found (a reader who sees only
  // part of a model) still lists its dates.
  for (const p of phases) if (!shown.has(p) && byPhase.get(p).length) group(p, byPhase.get(p))
  return oldestFirst.reverse()
}

// rangeText writes a list of ranges: "750–410 BCE (91.2%), 380–360 BCE (4.2%)".
export function rangeText(ranges, yearText, pct) {
  return (ranges || []).map((r) => `${yearText(r.from)} – ${yearText(r.to)} (${pct(r.p)})`).join(', ')
}

// runAnswer is a job route's answer however it came: at once (the run's
// JSON), or as 202 with its job, followed with waitJob (onProgress gets
// the job, so the screen can show its progress and cancel it) until the
// route's answer, kept in the job's result as {status, body}. An answer
// of 4xx/5xx is thrown as the route's error would have been.
export async function runAnswer(client, res, onProgress = () => {}, intervalMs = 500) {
  if (res?.code !== 'job_started' || !res.job) return res
  const out = await waitJob(client, res.job, onProgress, intervalMs)
  const body = out?.body
  if (out?.status >= 400) throw new ApiError(out.status, typeof body === 'object' && body ? body : { code: 'job_failed', message: String(body) })
  return body
}

// cycleText writes a sequence_cycle error's path ("US 12 → US 15 → US 12"),
// or '' for another error.
export function cycleText(err) {
  const p = err?.body?.path
  return err?.code === 'sequence_cycle' && Array.isArray(p) ? p.join(' → ') : ''
}

// layers gives each unit of a matrix layout its layer (0 at the top, the
// latest) from the laid-out nodes' y.
export function layers(nodes) {
  const ys = [...new Set((nodes || []).map((n) => n.y))].sort((a, b) => a - b)
  const at = new Map(ys.map((y, i) => [y, i]))
  return new Map((nodes || []).map((n) => [n.id, at.get(n.y)]))
}

// phaseUnits lists the model's phases against the matrix, latest at the
// top as the matrix reads: each phase ({name, units}) with its dated units
// ({id, label, layer, dates}) in matrix order (layer, then label). The
// phases are the preview's, oldest first; units come from its dates
// (record_id, unit_label); layer from layers() (undefined when the unit is
// not in the drawn matrix). Dates in no phase make a last group, name null.
export function phaseUnits(preview, layerOf = new Map()) {
  const groups = new Map((preview?.phases || []).map((p) => [p, new Map()]))
  const loose = new Map()
  for (const d of preview?.dates || []) {
    const g = (d.phase && groups.get(d.phase)) || loose
    const u = g.get(d.record_id) || { id: d.record_id, label: d.unit_label, layer: layerOf.get(d.record_id), dates: [] }
    u.dates.push(d.name)
    g.set(d.record_id, u)
  }
  const sort = (m) => [...m.values()].sort((a, b) => (a.layer ?? Infinity) - (b.layer ?? Infinity) || String(a.label).localeCompare(String(b.label), undefined, { numeric: true }))
  const out = [...groups.entries()].reverse().map(([name, m]) => ({ name, units: sort(m) }))
  if (loose.size) out.push({ name: null, units: sort(loose) })
  return out
}
