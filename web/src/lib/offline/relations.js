// Stratigraphic relations made or removed on the device (issue 32): each
// is a mutation of its own in the queue ({rs: {add: {first, relation,
// second}}} or {rs: {delete: id}}, docs/sync.md "Relations"), keyed apart
// from the records' (k "rs/<id>") so that it never joins a record's edit.
// A record's read offline shows its pulled relations with the queue laid
// over them, oriented from the record as the server's read is.
import { db, isTemp, rowKey, uuid } from './db.js'
import { OfflineError, QUEUE_MAX, getRow, kvGet, refreshCounts } from './store.js'

export const RELATION_NAMES = { 1: 'is covered by', 2: 'is cut by', 3: 'carries', 4: 'is filled by', 5: 'covers', 6: 'cuts',
  7: 'leans against', 8: 'fills', 9: 'is the same as', 10: 'is bound to' }
export const inverse = (r) => (r >= 1 && r <= 4 ? r + 4 : r >= 5 && r <= 8 ? r - 4 : r)

// end: a record's id as the queue keeps it (a number, or a tmp- id).
const end = (v) => (isTemp(v) ? v : Number(v))
const same = (a, b) => String(a) === String(b)

async function push(d, m) {
  if (await d.queue.count() >= QUEUE_MAX) throw new OfflineError('offline_queue_full', `at most ${QUEUE_MAX} changes wait to be sent: connect to send them`)
  await d.queue.add(m)
}

// addRelation queues (first, relation, second) on table; its id is a
// tmp- id until the pull brings the server's.
export async function addRelation(app, table, { first, relation, second }) {
  const d = db(app)
  if (!d) throw new OfflineError('offline_signed_out')
  const code = Number(relation)
  if (!(code >= 1 && code <= 10)) throw new OfflineError('invalid_relation', 'relation is a code from 1 to 10')
  if (same(first, second)) throw new OfflineError('self_relation', 'a record cannot be related to itself')
  const rs = await relationsOf(app, table, first)
  if (Object.values(rs).some((r) => same(r.second, second))) throw new OfflineError('relation_already_exist', 'these records are already related')
  const id = 'tmp-' + uuid()
  await d.transaction('rw', d.queue, async () => {
    await push(d, { mutation_id: uuid(), k: 'rs/' + id, table, rs: { add: { first: end(first), relation: code, second: end(second) } },
      rel_id: id, rec: end(first), set: {}, delete: false, state: 'pending', at: Date.now() })
  })
  await refreshCounts(app)
  return { code: 'ok_relation_add', id, offline: true }
}

// deleteRelation removes a relation: one queued and never sent leaves the
// queue; one the server holds (its table found among the rows that show
// it) is a queued delete.
export async function deleteRelation(app, id) {
  const d = db(app)
  if (!d) throw new OfflineError('offline_signed_out')
  if (isTemp(id)) {
    const m = await d.queue.where('k').equals('rs/' + id).first()
    if (!m || m.seq) throw new OfflineError('relation_not_found', 'no such relation')
    await d.queue.delete(m.n)
  } else {
    const row = await d.rows.filter((r) => !!r.rs?.[id]).first()
    if (!row) throw new OfflineError('relation_not_found', 'no such relation')
    await d.transaction('rw', d.queue, async () => {
      await push(d, { mutation_id: uuid(), k: 'rs/' + id, table: row.tb, rs: { delete: Number(id) }, rec: row.id, set: {}, delete: false, state: 'pending', at: Date.now() })
    })
  }
  await refreshCounts(app)
  return { code: 'ok_relation_deleted', offline: true }
}

// label of a record held on the device, as the server's read labels it
// (its table's id_field), or null.
async function labelOf(app, tb, id) {
  const row = await getRow(app, tb, id)
  if (!row) return null
  const tpl = await kvGet(app, 'tpl:' + tb)
  const v = row.values?.[tpl?.id_field || 'id']
  return v === undefined || v === null ? String(row.id) : String(v)
}

// relationsOf: record id's relations on the device, as the read's "rs"
// gives them (keyed by id, oriented from the record): the pulled ones,
// less those queued for deletion, with those queued for addition.
export async function relationsOf(app, tb, id) {
  const d = db(app)
  if (!d) return {}
  const row = await d.rows.get(rowKey(tb, id))
  const out = { ...(row?.rs || {}) }
  const queue = (await d.queue.orderBy('n').toArray()).filter((m) => m.rs && m.table === tb && m.state !== 'refused')
  for (const m of queue) {
    if (m.rs.delete) { delete out[String(m.rs.delete)]; continue }
    const { first, relation, second } = m.rs.add
    if (!same(first, id) && !same(second, id)) continue
    const [a, b, r] = same(first, id) ? [first, second, relation] : [second, first, inverse(relation)]
    out[m.rel_id] = { id: m.rel_id, first: a, second: b, relation: r, relation_label: RELATION_NAMES[r],
      first_label: await labelOf(app, tb, a), second_label: await labelOf(app, tb, b), pending: true }
  }
  return out
}

// wireRS is a queued relation change as the push sends it: ends made here
// as {"temp_id"}.
export function wireRS(rs) {
  if (!rs.add) return rs
  const ref = (v) => (isTemp(v) ? { temp_id: v } : v)
  return { add: { first: ref(rs.add.first), relation: rs.add.relation, second: ref(rs.add.second) } }
}
