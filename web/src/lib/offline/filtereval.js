// The filter language (docs/filter.md) evaluated on the device, for lists
// of the tables kept offline (issue 32). It covers the common operators on
// a table's own fields and groups (_and/_or at any depth), and one hop
// through a lookup into another table the device holds; anything else
// (plugin operators, plugin tables, backlinks) is reported as unsupported
// rather than guessed, so the list says it cannot filter that offline.
// Its results are compared with the server's by core/webui/browsertest
// (TestOfflineFilterMatchesServer).

export class UnsupportedFilter extends Error {
  constructor(what) { super(`not available offline: ${what}`); this.what = what }
}

const FLAGS = ['_null', '_nnull', '_empty', '_nempty']
const NEGATIVE = ['_neq', '_ncontains', '_nstarts_with', '_nends_with', '_nin']
const TEXT = ['_contains', '_icontains', '_ncontains', '_starts_with', '_nstarts_with', '_ends_with', '_nends_with']
const KNOWN = ['_eq', '_neq', '_gt', '_lt', '_gte', '_lte', '_between', '_in', '_nin', '_contains', '_icontains',
  '_ncontains', '_starts_with', '_nstarts_with', '_ends_with', '_nends_with', ...FLAGS]

// storage is the column's storage type from its schema entry: text, int,
// float, date or bool (ids, creators and lookups are ints).
export function storage(fd) {
  if (!fd) return 'text'
  if (fd.name === 'id' || fd.name === 'creator' || fd.id_from_tb) return 'int'
  const t = fd.db_type || ''
  if (t === 'int' || t === 'float' || t === 'bool' || t === 'date') return t
  if (fd.type === 'boolean') return 'bool'
  if (fd.type === 'date') return 'date'
  return 'text'
}

// fold is the case folding of the case-insensitive operators: one
// character to one (Go's unicode.ToLower, which toLowerCase matches for
// single characters but for the few that expand; those keep themselves).
export function fold(s) {
  let out = ''
  for (const ch of String(s)) {
    const l = ch.toLowerCase()
    out += [...l].length === 1 ? l : ch
  }
  return out
}

function list(v) {
  if (Array.isArray(v)) return v
  if (v === null || v === undefined) return []
  return String(v).split(',')
}

// operand converts a filter value to the column's type (null when it does
// not convert: such a filter the server refuses, so it matches nothing here).
function operand(kind, v) {
  if (v === null || v === undefined) return null
  switch (kind) {
    case 'int': case 'float': {
      const n = typeof v === 'number' ? v : Number(String(v).trim())
      return String(v).trim() === '' || Number.isNaN(n) ? null : n
    }
    case 'bool':
      if (v === true || v === 'true' || v === 1 || v === '1') return true
      if (v === false || v === 'false' || v === 0 || v === '0') return false
      return null
    case 'date': return String(v).trim()
    default: return String(v)
  }
}

// stored reads a row's value as the column's type (null for none).
function stored(kind, v) {
  if (v === null || v === undefined) return null
  if (kind === 'text') return typeof v === 'string' ? v : Array.isArray(v) ? JSON.stringify(v) : String(v)
  if (kind === 'date') return v === '' ? null : String(v).slice(0, 10)
  if (v === '') return null
  return operand(kind, v)
}

// text is a value's text for the text operators (ints as decimals).
const text = (v) => String(v)

function cmp(a, b) {
  if (typeof a === 'number' && typeof b === 'number') return a - b
  if (typeof a === 'boolean') return Number(a) - Number(b)
  // code point order, as the server's (docs/filter.md, "Text order")
  const x = [...String(a)].map((c) => c.codePointAt(0))
  const y = [...String(b)].map((c) => c.codePointAt(0))
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i]
  return x.length - y.length
}

function test(kind, op, raw, val) {
  const v = stored(kind, raw)
  if (op === '_null') return v === null
  if (op === '_nnull') return v !== null
  if (op === '_empty') return v === null || (kind === 'text' && v === '')
  if (op === '_nempty') return !(v === null || (kind === 'text' && v === ''))
  if (v === null) return NEGATIVE.includes(op)
  switch (op) {
    case '_eq': { const o = operand(kind, val); return o !== null && cmp(v, o) === 0 }
    case '_neq': { const o = operand(kind, val); return o === null || cmp(v, o) !== 0 }
    case '_gt': case '_lt': case '_gte': case '_lte': {
      const o = operand(kind, val)
      if (o === null) return false
      const c = cmp(v, o)
      return op === '_gt' ? c > 0 : op === '_lt' ? c < 0 : op === '_gte' ? c >= 0 : c <= 0
    }
    case '_between': {
      const [lo, hi] = list(val).map((x) => operand(kind, typeof x === 'string' ? x.trim() : x))
      return lo !== null && hi !== null && lo !== undefined && hi !== undefined && cmp(v, lo) >= 0 && cmp(v, hi) <= 0
    }
    case '_in': case '_nin': {
      const os = list(val).map((x) => operand(kind, kind === 'text' ? x : typeof x === 'string' ? x.trim() : x)).filter((o) => o !== null)
      const found = os.some((o) => cmp(v, o) === 0)
      return op === '_in' ? found : !found
    }
  }
  const s = text(v)
  const q = String(val ?? '')
  switch (op) {
    case '_contains': return s.includes(q)
    case '_icontains': return fold(s).includes(fold(q))
    case '_ncontains': return !fold(s).includes(fold(q))
    case '_starts_with': return fold(s).startsWith(fold(q))
    case '_nstarts_with': return !fold(s).startsWith(fold(q))
    case '_ends_with': return fold(s).endsWith(fold(q))
    case '_nends_with': return !fold(s).endsWith(fold(q))
  }
  throw new UnsupportedFilter(op)
}

function isFlagValue(v) { return v === undefined || v === null || v === true || v === 'true' || v === 1 || v === '' }

// compile turns a filter object into a predicate over rows ({id, values}).
// ctx: {fields: [schema entries of the table], related(table) → {fields,
// rows} of a lookup's table held on the device, or null}.
export function compile(filter, ctx, depth = 0) {
  if (filter === null || filter === undefined) return () => true
  if (typeof filter === 'string') return compile(JSON.parse(filter), ctx, depth)
  if (typeof filter !== 'object' || Array.isArray(filter)) throw new UnsupportedFilter('structure')
  const parts = []
  for (const [key, inner] of Object.entries(filter)) {
    if (key === '_and' || key === '_or') {
      const subs = list(inner).map((f) => compile(f, ctx, depth))
      if (!subs.length) continue
      parts.push(key === '_and' ? (r) => subs.every((p) => p(r)) : (r) => subs.some((p) => p(r)))
      continue
    }
    const fd = key === 'id' ? { name: 'id' } : key === 'creator' ? { name: 'creator' } : ctx.fields.find((f) => f.name === key)
    if (!fd) throw new UnsupportedFilter(key)
    if (!inner || typeof inner !== 'object' || Array.isArray(inner)) throw new UnsupportedFilter(key)
    const kind = storage(fd)
    for (const [op, val] of Object.entries(inner)) {
      if (op.startsWith('_') && op !== '_and' && op !== '_or') {
        if (!KNOWN.includes(op)) throw new UnsupportedFilter(op)
        if (FLAGS.includes(op) && !isFlagValue(val)) throw new UnsupportedFilter(op)
        if (TEXT.includes(op) && (kind === 'bool' || kind === 'float')) throw new UnsupportedFilter(op)
        const get = (r) => (key === 'id' ? r.id : r.values?.[key])
        parts.push((r) => test(kind, op, get(r), val))
      } else {
        // A nested condition through a lookup: the related rows that match.
        if (!fd.id_from_tb || depth >= 1) throw new UnsupportedFilter(key)
        const rel = ctx.related?.(fd.id_from_tb)
        if (!rel) throw new UnsupportedFilter(key)
        const pred = compile({ [op]: val }, { ...ctx, fields: rel.fields }, depth + 1)
        const ids = new Set(rel.rows.filter(pred).map((r) => String(r.id)))
        parts.push((r) => {
          const v = r.values?.[key]
          return v !== null && v !== undefined && v !== '' && ids.has(String(typeof v === 'object' ? v.temp_id : v))
        })
      }
    }
  }
  return (r) => parts.every((p) => p(r))
}

// matches filters rows; throws UnsupportedFilter for what it cannot evaluate.
export function matches(rows, filter, ctx) {
  const p = compile(filter, ctx)
  return rows.filter(p)
}
