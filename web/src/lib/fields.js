// What kind of editor a field gets, from its schema entry (the record's
// schema.fields), and how a value typed in a form is sent.
export function editorKind(f) {
  if (f.id_from_tb) return 'lookup'
  switch (f.type) {
    case 'md': return 'markdown'
    case 'long_text': return 'textarea'
    case 'boolean': return 'boolean'
    case 'date': return 'date'
    case 'slider': return 'slider'
    case 'multi_select': return 'multi'
    // A combo_select, or a select that allows other values (vocab_free),
    // is typed into with its values as suggestions; a plain select picks
    // one of them (the server refuses others: rule "vocabulary").
    case 'combo_select': return f.options_source ? 'suggest' : 'text'
    case 'select': return !f.options_source ? 'text' : f.vocab_free ? 'suggest' : 'select'
    case 'link_out': return 'url'
  }
  if (f.db_type === 'bool') return 'boolean'
  if (f.db_type === 'date') return 'date'
  if (f.db_type === 'int' || f.db_type === 'float') return 'number'
  return 'text'
}

// filterType maps a search-config field to the operator family of the builder.
export function filterType(f) {
  if (f.ref_tb) return 'lookup'
  if (f.type === 'boolean') return 'boolean'
  if (f.type === 'date') return 'date'
  if (f.type === 'slider') return 'number'
  return 'text'
}

// toWire converts an editor's value to what the save takes: "" clears.
export function toWire(kind, v) {
  // multi_select: a list, which the server keeps as JSON text.
  if (kind === 'multi') return Array.isArray(v) ? v : []
  if (kind === 'boolean') return v === true ? true : v === false ? false : null
  if (v === null || v === undefined) return ''
  return v
}

// fromWire: what an editor shows for a stored value.
export function fromWire(kind, v) {
  if (kind === 'multi') {
    if (Array.isArray(v)) return v
    if (typeof v === 'string' && v.startsWith('[')) {
      try { const list = JSON.parse(v); if (Array.isArray(list)) return list.map(String) } catch { /* plain text */ }
    }
    return v ? String(v).split(/[;,]/).map((s) => s.trim()).filter(Boolean) : []
  }
  if (kind === 'boolean') return v === true || v === 1 || v === '1' || v === 'true'
  return v ?? ''
}

// display is a value as read mode shows it.
export function display(v, t) {
  if (v === null || v === undefined || v === '') return t('rec.none')
  if (v === true) return t('rec.yes')
  if (v === false) return t('rec.no')
  if (Array.isArray(v)) return v.join(', ')
  return String(v)
}

// ruleText is a save's error on field f (a schema entry, or null) in the
// user's language: a bound the field declares says what is expected
// ("Must be at least 0.") instead of "Too small." followed by the server's
// English detail (issue 30); a rule without a message of ours shows the
// server's message. i18n is {t, tn, lang}.
export function ruleText(fe, f, { t, tn, lang }) {
  const { rule } = fe
  if (f) {
    const isDate = f.type === 'date' || f.db_type === 'date'
    const num = (v) => (typeof v === 'number' ? new Intl.NumberFormat(lang).format(v) : v)
    if (rule === 'min' && f.min != null) return t(isDate ? 'rule.min_date' : 'rule.min_value', { min: num(f.min) })
    if (rule === 'max' && f.max != null) return t(isDate ? 'rule.max_date' : 'rule.max_value', { max: num(f.max) })
    if (rule === 'max_length' && f.max_length != null) return tn('rule.max_length_n', f.max_length)
  }
  if (rule === 'vocabulary') return t('rule.vocabulary') // the server's detail names the values, in English
  const k = 'rule.' + rule
  const tr = t(k)
  return tr === k ? fe.message || rule : tr + (fe.message && rule !== 'required' ? ' ' + fe.message : '')
}
