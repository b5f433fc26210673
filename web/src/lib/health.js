// The matrix health screen's reading of the server's check
// (GET /rs/{tb}/check, docs/api.md "Matrix check") and of a strict
// table's refusal (409 rs_cycle): what the screen lists, and which units a
// problem's "Show on matrix" highlights.

// CATEGORIES in the order the screen lists them: what makes the matrix
// impossible first, then what is only untidy, then the datings.
export const CATEGORIES = ['cycle', 'same_above', 'dangling', 'missing_reciprocal', 'redundant', 'period_inversion', 'tpq_inversion']

// categories returns each category of a report in that order, with its
// count, truncation and items, or the reason it was not checked.
export function categories(report) {
  const problems = report?.problems || {}
  const skipped = report?.skipped || {}
  return CATEGORIES.map((kind) => {
    const p = problems[kind] || { count: 0, truncated: false, items: [] }
    return { kind, count: p.count || 0, truncated: !!p.truncated, items: p.items || [], skipped: skipped[kind] || null }
  })
}

// highlightPath is the list of units "Show on matrix" highlights for an
// item: the closed way round a cycle, the way between two same units or
// down an inversion, the two ends of a redundant relation or of a missing
// reciprocal, and for a relation to a deleted record the record that is
// left. Ids only, as the matrix's address takes them (?path=).
export function highlightPath(kind, item) {
  if (!item) return []
  if (Array.isArray(item.path) && item.path.length) return item.path.map(Number)
  switch (kind) {
    case 'redundant':
    case 'period_inversion':
    case 'tpq_inversion':
    case 'same_above':
      return [item.upper, item.lower].filter((x) => x !== undefined && x !== null).map(Number)
    case 'missing_reciprocal':
      return item.relation ? [Number(item.relation.first), Number(item.relation.second)] : []
    default:
      return (item.records || []).filter((r) => r.label !== null && r.label !== undefined).map((r) => Number(r.id))
  }
}

// recordLabels maps each record an item names to its label (null for a
// record that no longer exists).
export function recordLabels(report) {
  const out = new Map()
  for (const p of Object.values(report?.problems || {})) {
    for (const item of p.items || []) for (const r of item.records || []) if (!out.has(r.id) || out.get(r.id) === null) out.set(r.id, r.label ?? null)
  }
  return out
}

// fixesOf is the body of "Add all": one fix a listed missing reciprocal,
// at most max (the server takes 1000 at once).
export function fixesOf(report, max = 1000) {
  const items = report?.problems?.missing_reciprocal?.items || []
  return items.slice(0, max).map((it) => ({ kind: 'missing_reciprocal', relation_id: it.relation.id }))
}

// cycleSteps reads a 409 rs_cycle's path ([{id, label} | {hidden:true}],
// closed) into the steps the relation editor shows: a unit the caller
// may see with its id and label (#id when it has none), a hidden one as
// hidden. An answer without a path gives none, and the editor shows the
// server's path_text instead.
export function cycleSteps(body) {
  const path = Array.isArray(body?.path) ? body.path : []
  return path.map((p) => (p && !p.hidden && p.id !== undefined && p.id !== null
    ? { id: p.id, label: p.label || '#' + p.id }
    : { hidden: true }))
}

// cycleText writes the steps as one line, hidden units as "…": what a
// screen reader and a copy of the message read.
export function cycleText(steps) {
  return steps.map((s) => (s.hidden ? '…' : s.label)).join(' → ')
}
