// The filter builder's model and its translation to and from the filter
// language (docs/filter.md): a tree of groups ({kind:'group', join:'and'|'or',
// items}) and conditions ({kind:'cond', path:['unit','code'], op, value}).
// A path of one name is a field of the table; two names reach a lookup's
// table or a plugin table (a nested condition, one hop).

export const FLAG_OPS = ['_empty', '_nempty', '_null', '_nnull']
export const LIST_OPS = ['_in', '_nin', '_between']
export const TEXT_OPS = ['_icontains', '_ncontains', '_contains', '_starts_with', '_nstarts_with', '_ends_with', '_nends_with']
export const ORDER_OPS = ['_eq', '_neq', '_gt', '_gte', '_lt', '_lte', '_between', '_in', '_nin']

// operatorsFor lists the operators that suit a field type.
export function operatorsFor(type) {
  switch (type) {
    case 'boolean': return ['_eq', '_neq', '_null', '_nnull']
    case 'date': case 'number': case 'slider': return [...ORDER_OPS, ...FLAG_OPS]
    case 'lookup': return ['_eq', '_neq', '_in', '_nin', '_null', '_nnull']
    default: return ['_icontains', '_eq', '_neq', '_ncontains', '_starts_with', '_nstarts_with', '_ends_with', '_nends_with', '_contains', '_gt', '_lt', '_gte', '_lte', '_between', '_in', '_nin', ...FLAG_OPS]
  }
}

let seq = 0
const uid = () => `n${++seq}`

export function newGroup(join = 'and', items = []) { return { kind: 'group', id: uid(), join, items } }
export function newCond(path = [], op = '_icontains', value = '') { return { kind: 'cond', id: uid(), path, op, value } }

function operand(c) {
  if (FLAG_OPS.includes(c.op)) return true
  if (LIST_OPS.includes(c.op)) {
    const parts = String(c.value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')
    return parts
  }
  return c.value
}

// isComplete: a condition with a field, an operator and (unless a flag) a value.
export function isComplete(c) {
  if (!c.path?.length || !c.op) return false
  if (FLAG_OPS.includes(c.op)) return true
  if (c.op === '_between') return operand(c).length === 2
  if (LIST_OPS.includes(c.op)) return operand(c).length > 0
  return c.value !== '' && c.value !== undefined && c.value !== null
}

function condToJSON(c) {
  let inner = { [c.op]: operand(c) }
  for (let i = c.path.length - 1; i >= 0; i--) inner = { [c.path[i]]: inner }
  return inner
}

// toFilter turns the tree into the filter object; null when it has no
// complete condition. Incomplete conditions and empty groups are left out.
export function toFilter(node) {
  if (!node) return null
  if (node.kind === 'cond') return isComplete(node) ? condToJSON(node) : null
  const parts = node.items.map(toFilter).filter(Boolean)
  if (parts.length === 0) return null
  if (parts.length === 1 && node.join === 'and') return parts[0]
  return { [node.join === 'or' ? '_or' : '_and']: parts }
}

const isOp = (k) => k.startsWith('_') && k !== '_and' && k !== '_or'

function valueToText(v) {
  if (Array.isArray(v)) return v.join(', ')
  return v === null || v === undefined ? '' : String(v)
}

// conditionsOf reads the conditions under a key path: operators become
// conditions, nested names go one level deeper.
function conditionsOf(path, obj, out) {
  for (const [k, v] of Object.entries(obj)) {
    if (isOp(k)) {
      out.push(newCond(path, k, FLAG_OPS.includes(k) ? '' : valueToText(v)))
    } else if (v && typeof v === 'object' && !Array.isArray(v)) {
      conditionsOf([...path, k], v, out)
    } else {
      throw new Error(`unsupported filter at ${[...path, k].join('.')}`)
    }
  }
}

// fromFilter turns a filter object into a tree (root: an "and" group).
// Several keys of one object are ANDed, as the server reads them.
export function fromFilter(f) {
  const root = newGroup('and')
  if (!f || typeof f !== 'object') return root
  const walk = (obj, group) => {
    for (const [k, v] of Object.entries(obj)) {
      if (k === '_and' || k === '_or') {
        const g = newGroup(k === '_or' ? 'or' : 'and')
        for (const item of v || []) {
          const keys = Object.keys(item || {})
          if (keys.length === 1 && (keys[0] === '_and' || keys[0] === '_or')) walk(item, g)
          else if (keys.length > 1 && k === '_or') { const sub = newGroup('and'); walk(item, sub); g.items.push(sub) }
          else walk(item, g)
        }
        group.items.push(g)
      } else if (v && typeof v === 'object') {
        const out = []
        conditionsOf([k], v, out)
        group.items.push(...out)
      }
    }
  }
  walk(f, root)
  // {"_or":[...]} alone reads back as the root "or" group, not an "and" around it.
  if (root.items.length === 1 && root.items[0].kind === 'group') return root.items[0]
  return root
}

// encode/decode: the filter as it travels in the page's URL (?f=<JSON>).
export function encode(filter) { return filter ? JSON.stringify(filter) : '' }
export function decode(s) {
  if (!s) return null
  try { const v = JSON.parse(s); return v && typeof v === 'object' ? v : null } catch { return null }
}
