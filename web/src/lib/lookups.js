// Lookup columns of a list show the label of the record they point at
// (its table's id_field), not the raw id. The list answers ids only, so
// the client asks each pointed-at table once per page for the labels of
// the ids on it — as the caller: a table it may not read keeps the ids.

// lookupColumns: the shown columns that are lookups, with the table and
// field their labels come from (GET /search/{tb}/config: ref_tb, ref_field).
export function lookupColumns(configFields, tb, shown) {
  const out = []
  for (const f of configFields || []) {
    const [ftb, name] = f.value.split(':')
    if (ftb !== tb || !f.ref_tb || !shown.includes(name)) continue
    if (!f.ref_field || f.ref_field === 'id') continue // the id is its own label
    out.push({ name, refTb: f.ref_tb, refField: f.ref_field })
  }
  return out
}

// labelRequests: one list request per lookup column for the ids on the page.
export function labelRequests(cols, rows) {
  const out = []
  for (const c of cols) {
    const ids = [...new Set(rows.map((r) => r[c.name]).filter((v) => v !== null && v !== undefined && v !== ''))]
    if (!ids.length) continue
    out.push({
      column: c.name,
      path: `/records/${c.refTb}`,
      params: { filter: { id: { _in: ids.map(String) } }, columns: `id,${c.refField}`, per_page: 200, total: 'false' },
      refField: c.refField,
    })
  }
  return out
}

// labelsFrom reads a list answer into id → label.
export function labelsFrom(answer, refField) {
  const m = new Map()
  for (const r of answer?.data || []) {
    if (r[refField] !== null && r[refField] !== undefined) m.set(String(r.id), String(r[refField]))
  }
  return m
}
