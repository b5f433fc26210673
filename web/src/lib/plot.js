// Small helpers for the SVG plots.
import { yearText } from './chrono.js'

// calBPToYear: cal BP (before AD 1950) to a signed calendar year without a
// year 0 (1 BCE is -1), as the radiocarbon plugin's *_years are.
export function calBPToYear(bp) {
  const y = 1950 - bp
  return y <= 0 ? y - 1 : y
}

export function formatYear(y) {
  return yearText(y)
}

// niceTicks: about n round values spanning [a, b].
export function niceTicks(a, b, n = 5) {
  if (!(b > a)) return [a]
  const raw = (b - a) / n
  const mag = 10 ** Math.floor(Math.log10(raw))
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || 10 * mag
  const out = []
  for (let v = Math.ceil(a / step) * step; v <= b + 1e-9; v += step) out.push(Math.round(v))
  return out
}
