// The publish screen's pure logic (issue 34): the ORCID check the server
// makes too (core/publish.ValidORCID), and the mapping between the
// publication setting as the API has it (GET/PUT /publish/config) and the
// form the screen edits — every table of the application listed, a
// "public" switch on each, a tick per field — and back. Nothing is public
// until ticked: a table or field the setting does not name is off.
import { fromFilter, toFilter } from './filter.js'

// normalizeORCID is what the server keeps of a typed ORCID iD: trimmed,
// without the https://orcid.org/ prefix people paste, an upper-case X.
export function normalizeORCID(s) {
  return String(s ?? '').trim().replace(/^https?:\/\/orcid\.org\//i, '').toUpperCase()
}

const ORCID_SHAPE = /^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$/

// orcidProblem says what is wrong with a typed ORCID iD: '' (nothing, an
// empty one included: it is optional), 'format' (not 0000-0000-0000-000X)
// or 'checksum' (the ISO 7064 11,2 check digit does not match, a typo).
export function orcidProblem(raw) {
  const id = normalizeORCID(raw)
  if (id === '') return ''
  if (!ORCID_SHAPE.test(id)) return 'format'
  const digits = id.replaceAll('-', '')
  let total = 0
  for (const c of digits.slice(0, 15)) total = (total + Number(c)) * 2
  const check = (12 - (total % 11)) % 11
  return digits[15] === (check === 10 ? 'X' : String(check)) ? '' : 'checksum'
}

// validORCID reports a well-formed ORCID iD with its check digit right.
export function validORCID(raw) {
  return normalizeORCID(raw) !== '' && orcidProblem(raw) === ''
}

// validAAT: a Getty AAT concept URI, as the server asks for a term's id.
export function validAAT(id) {
  return /^http:\/\/vocab\.getty\.edu\/aat\/\d{6,9}$/.test(String(id ?? '').trim())
}

// parseKeywords reads the keywords box (commas between them): trimmed,
// empty ones dropped, each once.
export function parseKeywords(text) {
  const out = []
  for (const k of String(text ?? '').split(',')) {
    const v = k.trim()
    if (v && !out.includes(v)) out.push(v)
  }
  return out
}

// formatSize is a byte count for people (the versions list).
export function formatSize(bytes) {
  if (bytes === null || bytes === undefined || !Number.isFinite(Number(bytes))) return ''
  const n = Number(bytes)
  if (n < 1024) return `${n} B`
  const units = ['KB', 'MB', 'GB', 'TB']
  let v = n / 1024
  let i = 0
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++ }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`
}

// catalogOf lists the tables a setting can name, from GET /tables (the
// tables, not their plugin tables) and each table's GET /search/{tb}/config
// fields ("table:field", its plugin tables' fields after its own): every
// table with its fields, each plugin table right after its parent with
// `parent` set.
export function catalogOf(tables, searchFields) {
  const out = []
  for (const t of tables || []) {
    const own = []
    const plugins = new Map()
    for (const f of searchFields?.[t.name] || []) {
      const [tb, name] = String(f.value).split(':')
      if (!name) continue
      const field = { name, label: f.label || name, type: f.type }
      if (tb === t.name) own.push(field)
      else {
        if (!plugins.has(tb)) plugins.set(tb, [])
        plugins.get(tb).push(field)
      }
    }
    out.push({ name: t.name, label: t.label || t.name, parent: '', fields: own })
    for (const [name, fields] of plugins) out.push({ name, label: name, parent: t.name, fields })
  }
  return out
}

let seq = 0
const key = () => `a${++seq}`

// sameJSON compares two JSON values, objects whatever their keys' order.
export function sameJSON(a, b) {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  return ka.every((k) => Object.hasOwn(b, k) && sameJSON(a[k], b[k]))
}

// filterForm is a table's row filter as the form edits it: in the filter
// builder when the builder gives back exactly the filter saved, else as
// JSON text (a filter written by hand or by the API: a number where the
// builder writes text, an operator it does not offer), never changed by
// merely opening the screen.
function filterForm(filter) {
  if (!filter) return { filterMode: 'builder', tree: fromFilter(null), filterText: '' }
  try {
    const tree = fromFilter(filter)
    if (sameJSON(toFilter(tree), filter)) return { filterMode: 'builder', tree, filterText: '' }
  } catch { /* not the builder's shape */ }
  return { filterMode: 'json', tree: fromFilter(null), filterText: JSON.stringify(filter, null, 2) }
}

function tableForm(cat, saved) {
  const fields = cat.fields.map((f) => ({ name: f.name, label: f.label, known: true, public: !!saved?.fields?.includes(f.name) }))
  // A field the setting names that is gone from the table stays listed,
  // ticked, so that the admin sees it and the server's refusal has a place.
  for (const name of saved?.fields || []) {
    if (!fields.some((f) => f.name === name)) fields.push({ name, label: name, known: false, public: true })
  }
  return {
    name: cat.name, label: cat.label, parent: cat.parent || '', known: cat.known !== false,
    public: !!saved, kind: saved?.kind || 'other',
    termId: saved?.term?.id || '', termLabel: saved?.term?.label || '',
    fields, ...filterForm(saved?.filter),
  }
}

// formFromConfig is the form of a setting over the application's catalog
// (catalogOf). Tables the setting names that the catalog lacks come last,
// public, so that nothing saved disappears without a word.
export function formFromConfig(config, catalog) {
  const c = config || {}
  const byName = new Map((c.tables || []).map((t) => [t.name, t]))
  const tables = (catalog || []).map((cat) => tableForm(cat, byName.get(cat.name)))
  for (const t of c.tables || []) {
    if (!tables.some((x) => x.name === t.name)) tables.push(tableForm({ name: t.name, label: t.name, parent: '', fields: [], known: false }, t))
  }
  return {
    title: c.title || '', description: c.description || '', licence: c.licence || 'CC-BY-4.0',
    contact: c.contact || '', publisher: c.publisher || '', language: c.language || '',
    keywords: (c.keywords || []).join(', '),
    authors: (c.authors || []).map((a) => ({ key: key(), name: a.name || '', given_name: a.given_name || '', family_name: a.family_name || '',
      orcid: a.orcid || '', affiliation: a.affiliation || '' })),
    tables,
    doi: { provider: c.doi?.provider || '', base_url: c.doi?.base_url || '', repository_id: c.doi?.repository_id || '', prefix: c.doi?.prefix || '' },
    doi_secret: '', doi_secret_clear: false,
  }
}

// newAuthor is an empty author row.
export function newAuthor() {
  return { key: key(), name: '', given_name: '', family_name: '', orcid: '', affiliation: '' }
}

// filterOf reads a table's filter from the form: { filter } (null: every
// row) or { error } when the JSON text does not parse as an object.
export function filterOf(t) {
  if (t.filterMode !== 'json') return { filter: toFilter(t.tree) }
  const text = String(t.filterText ?? '').trim()
  if (text === '') return { filter: null }
  try {
    const v = JSON.parse(text)
    if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: 'object' }
    return { filter: Object.keys(v).length ? v : null }
  } catch (e) {
    return { error: 'json', detail: e.message }
  }
}

// configFromForm is the setting the form says, as PUT /publish/config
// takes it (the credential apart: see secretOf). Only public tables are
// sent, each with its ticked fields in the table's order.
export function configFromForm(form) {
  const tables = []
  for (const t of form.tables) {
    if (!t.public) continue
    const out = { name: t.name, kind: t.kind || 'other', fields: t.fields.filter((f) => f.public).map((f) => f.name) }
    if (t.termId.trim() || t.termLabel.trim()) out.term = { id: t.termId.trim(), label: t.termLabel.trim() }
    const { filter } = filterOf(t)
    if (filter) out.filter = filter
    tables.push(out)
  }
  const doi = { provider: form.doi.provider }
  if (form.doi.provider) {
    for (const k of ['base_url', 'repository_id', 'prefix']) if (form.doi[k].trim()) doi[k] = form.doi[k].trim()
  }
  return {
    title: form.title.trim(), description: form.description.trim(), licence: form.licence,
    contact: form.contact.trim(), publisher: form.publisher.trim(), language: form.language.trim().toLowerCase(),
    keywords: parseKeywords(form.keywords),
    authors: form.authors.map((a) => {
      const out = { name: a.name.trim() }
      for (const k of ['given_name', 'family_name', 'affiliation']) if (a[k].trim()) out[k] = a[k].trim()
      if (a.orcid.trim()) out.orcid = normalizeORCID(a.orcid)
      return out
    }),
    tables, doi,
  }
}

// secretOf is the doi_secret to send: a new credential typed, "" to
// remove the one set, undefined to keep it as it is.
export function secretOf(form) {
  if (form.doi_secret_clear) return ''
  return form.doi_secret ? form.doi_secret : undefined
}

// formProblems are what the screen refuses before asking the server:
// ORCID iDs whose check digit is wrong, AAT ids that are not AAT URIs,
// filters that are not JSON objects, and an empty description (the
// setting takes one, but a version cannot be made without it: the
// RO-Crate's root dataset must have one). Keyed as errorTarget keys them.
export function formProblems(form) {
  const out = {}
  if (!form.description.trim()) out.description = { message: 'pub.description_needed' }
  form.authors.forEach((a, i) => {
    const p = orcidProblem(a.orcid)
    if (p) out[`authors.${i}.orcid`] = { message: 'pub.orcid_' + p }
  })
  for (const t of form.tables) {
    if (!t.public) continue
    if (t.termId.trim() && !validAAT(t.termId)) out[`tables.${t.name}.term`] = { message: 'pub.term_invalid' }
    const f = filterOf(t)
    if (f.error) out[`tables.${t.name}.filter`] = { message: 'pub.filter_bad_' + f.error, detail: f.detail || '' }
  }
  return out
}

// errorTarget turns the `field` of a publish_config_invalid answer, a
// path into the setting that was sent ("tables[1].fields[2]",
// "authors[0].orcid", "doi.base_url"), into the key of the form's place
// for it ("tables.units.fields.code", "authors.0.orcid"): tables and
// fields by name, since the form lists every table and the setting only
// the public ones.
export function errorTarget(field, sent) {
  const f = String(field ?? '')
  let m = /^tables\[(\d+)\](?:\.(\w+)(?:\[(\d+)\])?)?/.exec(f)
  if (m) {
    const t = sent?.tables?.[Number(m[1])]
    if (!t) return 'tables'
    if (!m[2]) return `tables.${t.name}`
    if (m[2] === 'fields' && m[3] !== undefined) {
      const name = t.fields?.[Number(m[3])]
      return name === undefined ? `tables.${t.name}.fields` : `tables.${t.name}.fields.${name}`
    }
    return `tables.${t.name}.${m[2]}`
  }
  m = /^authors\[(\d+)\](?:\.(\w+))?/.exec(f)
  if (m) return m[2] ? `authors.${m[1]}.${m[2]}` : `authors.${m[1]}`
  if (/^keywords(\[\d+\])?$/.test(f)) return 'keywords'
  return f
}
