import { ruleText } from './fields.js'

// Bulk work on the rows selected in a list (issue 30): the selection's
// state, the batch that sets one field on every selected record, and how
// the server's answers map back onto rows, so that each refusal is shown on
// the row it concerns and nothing is lost silently.

// pageState says whether the rows of the page (ids) are all, some or none
// of selected (a Set of ids): the "select all" checkbox is checked, mixed
// (indeterminate) or clear.
export function pageState(selected, ids) {
  const n = ids.filter((id) => selected.has(id)).length
  if (n === 0) return 'none'
  return n === ids.length ? 'all' : 'some'
}

// toggled is selected with every id of ids added (on) or removed.
export function toggled(selected, ids, on) {
  const out = new Set(selected)
  for (const id of ids) {
    if (on) out.add(id)
    else out.delete(id)
  }
  return out
}

// editBatch is the POST /batch body setting field to value (already in its
// wire form) on each record of ids, in order: the answer's index i is
// ids[i].
export function editBatch(tb, ids, field, value) {
  return {
    requests: ids.map((id) => ({
      method: 'POST',
      url: `/record/${encodeURIComponent(tb)}/${encodeURIComponent(id)}`,
      body: { core: { [field]: value } },
    })),
  }
}


// batchRefusals maps a failed batch (an ApiError) onto the rows it names:
// {id: message}. The batch is all or nothing, so none of the rows was
// saved; validation errors name every failing request, any other refusal
// (privilege, a record gone, a conflict) the one request that stopped it.
// A failure that names no request returns {} and is shown as the list's
// error. field is the schema entry of the field set (for its bounds);
// i18n is {t, tn, lang}.
export function batchRefusals(err, ids, field, i18n, errorText) {
  const out = {}
  const body = err?.body || {}
  if (err?.code === 'validation_failed' && Array.isArray(body.errors)) {
    for (const fe of body.errors) {
      const id = ids[fe.index]
      if (id === undefined) continue
      const msg = `${fe.label || fe.field}: ${ruleText(fe, field && fe.field === field.name ? field : null, i18n)}`
      out[id] = out[id] ? `${out[id]} ${msg}` : msg
    }
    return out
  }
  if (Number.isInteger(body.index) && ids[body.index] !== undefined) out[ids[body.index]] = errorText(err)
  return out
}

// deleteOutcome reads the answer of DELETE /record/{tb}/{ids} (or the body
// of its refusal): which ids went, and a note for each that stayed. Each id
// is decided alone, so some may go while others are refused.
export function deleteOutcome(body, t) {
  const deleted = (body?.deleted_ids || []).map(String)
  const notes = {}
  for (const id of body?.denied_ids || []) notes[String(id)] = t('bulk.denied_delete')
  for (const id of body?.not_found_ids || []) notes[String(id)] = t('bulk.not_found')
  return { deleted, notes }
}
