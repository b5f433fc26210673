// Live changes of an application (issue 31, docs/api.md "Live changes"):
// one EventSource per app, shared by every view that shows records. Views
// add and remove their subscriptions (a list's filter, one record); the
// module sends the server the union of them, debounced, and routes each
// event to the views whose subscriptions it names. A dropped stream comes
// back with a fresh signed token and the last event id it saw, so the
// server replays what was missed; a `resync` tells every view to reload;
// `unauthorized` ends the session as a refused request does. Presence (who
// else has a record open, and which field they edit) goes over the same
// client id.
import { reactive } from 'vue'
import { api, endSession, sessionOf } from './api.js'
import { editorKind, fromWire, toWire } from './fields.js'
import { locale, t } from './i18n.js'

// ---- pure parts (live.test.js) ----

// stable is JSON with object keys sorted, so two equal filters are one key.
export function stable(v) {
  if (Array.isArray(v)) return '[' + v.map(stable).join(',') + ']'
  if (v && typeof v === 'object') return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + stable(v[k])).join(',') + '}'
  return JSON.stringify(v ?? null)
}

// specKey names what a subscription asks for: one record, or a table's
// rows under a filter (none: every row).
export function specKey(spec) {
  return spec.record != null ? `${spec.table}#${spec.record}` : `${spec.table}?${stable(spec.filter ?? null)}`
}

// unionSet is the set the server gets for the views' specs: one entry a
// distinct spec, its id kept for as long as some view holds that spec (ids:
// Map key → id, updated in place), so an event in flight while the set is
// replaced still finds its views. counter numbers new ids.
export function unionSet(specs, ids, counter = { n: 0 }) {
  const out = []
  const keys = new Set()
  for (const spec of specs) {
    const k = specKey(spec)
    if (keys.has(k)) continue
    keys.add(k)
    if (!ids.has(k)) ids.set(k, 's' + (++counter.n))
    const e = { id: ids.get(k), table: spec.table }
    if (spec.record != null) e.record = Number(spec.record)
    else if (spec.filter != null) e.filter = spec.filter
    out.push(e)
  }
  for (const k of [...ids.keys()]) if (!keys.has(k)) ids.delete(k)
  return out
}

// Events every view hears, whatever it subscribed to.
export const BROADCAST = new Set(['schema', 'resync'])

// route returns the entries ({key, handler}) an event goes to: the ones
// whose subscription the event names, or all of them for a broadcast.
export function route(type, data, entries, ids) {
  const list = [...entries]
  if (BROADCAST.has(type)) return list
  const named = new Set(data?.subscriptions || [])
  return list.filter((e) => named.has(ids.get(e.key)))
}

const same = (a, b) => stable(a) === stable(b)

// mergeRemote compares a record saved elsewhere (remote, its `core`) with
// the one a form started from (base) and the form's values: fields the user
// did not touch take the new value (take: name → editor value); fields both
// changed, to different values, are conflicts for the user to decide.
// changed lists every field the other save changed.
export function mergeRemote(fields, base, remote, form) {
  const changed = []
  const take = {}
  const conflicts = []
  for (const fd of fields) {
    const kind = editorKind(fd)
    const b = toWire(kind, fromWire(kind, base?.[fd.name]?.val))
    const r = toWire(kind, fromWire(kind, remote?.[fd.name]?.val))
    if (same(b, r)) continue
    changed.push(fd.name)
    const m = toWire(kind, form[fd.name])
    if (same(m, b) || fd.readonly || fd.hide) take[fd.name] = fromWire(kind, remote?.[fd.name]?.val)
    else if (!same(m, r)) conflicts.push(fd.name)
  }
  return { changed, take, conflicts }
}

// rowOf is a list row (its columns `names`) from an event's record, with
// the lookup labels it carries ([column, id, label]) for the list's cells.
export function rowOf(id, record, names) {
  const row = { id }
  const labels = []
  for (const n of names) {
    if (n === 'id') continue
    const c = record?.core?.[n]
    row[n] = c?.val ?? null
    if (c && c.val_label != null && c.val != null) labels.push([n, String(c.val), c.val_label])
  }
  return { row, labels }
}

// applyToList applies one event to a list's page: state {data, total,
// fresh: Set of ids marked new, waiting: Set of ids arrived but not shown}.
// insert: whether an arrival may go on the page (the user is at its top,
// on page 1); else it is counted in waiting. Returns the new state.
export function applyToList(state, type, data, { names, insert }) {
  const id = String(data.id)
  const at = state.data.findIndex((r) => String(r.id) === id)
  const out = { data: state.data, total: state.total, fresh: state.fresh, waiting: state.waiting, labels: [] }
  if (type === 'delete' || type === 'leave') {
    if (state.waiting.has(id)) {
      out.waiting = new Set(state.waiting)
      out.waiting.delete(id)
      return out
    }
    if (at >= 0) out.data = state.data.filter((_, i) => i !== at)
    out.total = Math.max(0, (state.total ?? 0) - 1)
    if (state.fresh.has(id)) { out.fresh = new Set(state.fresh); out.fresh.delete(id) }
    return out
  }
  if (type !== 'create' && type !== 'update' && type !== 'enter') return out
  const { row, labels } = rowOf(data.id, data.record, names)
  out.labels = labels
  if (at >= 0) {
    out.data = state.data.slice()
    out.data[at] = { ...state.data[at], ...row, id: state.data[at].id }
    return out
  }
  if (type === 'update') return out // a row of another page
  if (state.waiting.has(id)) return out
  if (insert) {
    out.data = [row, ...state.data]
    out.total = (state.total ?? 0) + 1
    out.fresh = new Set(state.fresh).add(id)
  } else {
    out.waiting = new Set(state.waiting).add(id)
  }
  return out
}

// savedBy says who made a change: 'me' (this user, in another window or
// tab), a user id, or the actor (an API key, a plugin).
export function savedBy(ev, myId) {
  if (ev.user_id == null) return { actor: ev.actor || '' }
  if (myId != null && Number(ev.user_id) === Number(myId)) return { me: true, userId: ev.user_id }
  return { userId: ev.user_id }
}

// ---- the connection ----

const EVENTS = ['connect', 'create', 'update', 'enter', 'delete', 'leave', 'schema', 'resync', 'unauthorized', 'presence']
export const POST_DEBOUNCE_MS = 120
export const PRESENCE_EVERY_MS = 20000
const FIELD_DEBOUNCE_MS = 250
const IDLE_CLOSE_MS = 15000
const MAX_BACKOFF_MS = 30000
const MAX_NAMES = 500

let seq = 0

class Live {
  constructor(app) {
    this.app = app
    this.client = api(app)
    // synced: the server holds the views' current set (pages and tests
    // can tell that a change made now will reach them).
    this.state = reactive({ status: 'idle', clientId: null, synced: false })
    this.entries = new Map() // local id → {key, spec, handler}
    this.ids = new Map() // spec key → server subscription id
    this.counter = { n: 0 }
    this.es = null
    this.lastId = null
    this.failures = 0
    this.retryTimer = null
    this.idleTimer = null
    this.postTimer = null
    this.posting = false
    this.again = false
    this.presence = null // {table, record, field, onViewers}
    this.presenceTimer = null
    this.fieldTimer = null
    this.names = new Map() // user id → name, from presence (bounded)
  }

  // subscribe adds a view's subscription ({table, filter} or {table,
  // record}); handler(type, data) hears its events and the broadcasts.
  // Returns the function that removes it.
  subscribe(spec, handler) {
    const id = ++seq
    this.entries.set(id, { key: specKey(spec), spec, handler })
    this.changed()
    return () => { if (this.entries.delete(id)) this.changed() }
  }

  changed() {
    clearTimeout(this.idleTimer)
    if (!this.entries.size && !this.presence) {
      // Leaving a list for a record drops one subscription and adds another:
      // the stream stays a while, so it is not reopened at every step.
      this.idleTimer = setTimeout(() => this.close(), IDLE_CLOSE_MS)
    } else this.open()
    this.schedulePost()
  }

  schedulePost() {
    this.state.synced = false
    clearTimeout(this.postTimer)
    this.postTimer = setTimeout(() => this.post(), POST_DEBOUNCE_MS)
  }

  // post sends the union set; one request at a time, the last state wins.
  async post() {
    if (!this.state.clientId) return // sent on connect
    if (this.posting) { this.again = true; return }
    this.posting = true
    try {
      const subscriptions = unionSet([...this.entries.values()].map((e) => e.spec), this.ids, this.counter)
      await this.client.post('/realtime/subscriptions', { client_id: this.state.clientId, subscriptions })
      if (!this.again) this.state.synced = true
    } catch (e) {
      // The stream went away under us (another node, a restart): a new one
      // brings a new client id and the set again.
      if (e.code === 'client_not_found') this.reconnect()
    } finally {
      this.posting = false
      if (this.again) { this.again = false; this.post() }
    }
  }

  async open() {
    if (this.es || this.state.status === 'connecting' || !sessionOf(this.app)) return
    clearTimeout(this.retryTimer)
    this.state.status = 'connecting'
    let tok
    try {
      tok = (await this.client.post('/realtime/token')).t
    } catch (e) {
      this.state.status = 'idle'
      if (e.status !== 401) this.retryLater()
      return
    }
    if (!this.entries.size && !this.presence) { this.state.status = 'idle'; return }
    let url = `/${encodeURIComponent(this.app)}/api/realtime?t=${encodeURIComponent(tok)}`
    if (this.lastId != null) url += `&last_event_id=${this.lastId}`
    const es = new EventSource(url)
    this.es = es
    for (const type of EVENTS) es.addEventListener(type, (ev) => { if (this.es === es) this.onEvent(type, ev) })
    // A connection error, or the server's final `error` event: either way
    // the stream is gone. EventSource would retry with the same token,
    // which expires; a new one is asked for instead.
    es.addEventListener('error', () => { if (this.es === es) this.reconnect() })
  }

  onEvent(type, ev) {
    let data = {}
    try { data = ev.data ? JSON.parse(ev.data) : {} } catch { return }
    if (ev.lastEventId && type !== 'connect' && type !== 'presence') {
      const n = Number(ev.lastEventId)
      if (Number.isFinite(n)) this.lastId = n
    }
    switch (type) {
      case 'connect':
        this.state.clientId = data.client_id
        this.state.status = 'open'
        this.failures = 0
        clearTimeout(this.postTimer)
        this.post()
        if (this.presence) this.postPresence()
        return
      case 'presence':
        this.onPresence(data)
        return
      case 'unauthorized':
        this.stop()
        endSession(this.app, { status: 401, code: data.code || 'token_invalidated' })
        return
      case 'resync':
        // A slow reader's stream ends after this; the views reload now and
        // the stream comes back from the last id (replays are idempotent
        // for the views: a known row is updated in place).
        break
    }
    for (const e of route(type, data, this.entries.values(), this.ids)) {
      try { e.handler(type, data) } catch (err) { setTimeout(() => { throw err }) }
    }
  }

  reconnect() {
    this.drop()
    this.retryLater()
  }

  retryLater() {
    clearTimeout(this.retryTimer)
    if (this.state.status === 'stopped') return
    const wait = Math.min(MAX_BACKOFF_MS, 500 * 2 ** this.failures)
    this.failures++
    this.retryTimer = setTimeout(() => { if (this.entries.size || this.presence) this.open() }, wait)
  }

  drop() {
    if (this.es) { this.es.close(); this.es = null }
    this.state.clientId = null
    this.state.synced = false
    if (this.state.status !== 'stopped') this.state.status = 'idle'
  }

  close() {
    clearTimeout(this.retryTimer)
    this.drop()
  }

  // stop: the session ended; nothing reconnects until a view subscribes
  // again with a new session.
  stop() {
    this.close()
    this.state.status = 'stopped'
    this.lastId = null
    clearInterval(this.presenceTimer)
    this.presence = null
  }

  // ---- presence ----

  // present says this client has record `record` of `table` open; onViewers
  // hears who else has it (a list of {user_id, name, field?}). Returns
  // {focus(field|null), leave()}. One record at a time: the newest wins.
  present(table, record, onViewers) {
    const p = { table, record: Number(record), field: null, onViewers }
    this.presence = p
    this.changed()
    this.postPresence()
    clearInterval(this.presenceTimer)
    this.presenceTimer = setInterval(() => this.postPresence(), PRESENCE_EVERY_MS)
    return {
      focus: (field) => {
        if (this.presence !== p || p.field === field) return
        p.field = field
        clearTimeout(this.fieldTimer)
        this.fieldTimer = setTimeout(() => this.postPresence(), FIELD_DEBOUNCE_MS)
      },
      leave: () => {
        if (this.presence !== p) return
        this.presence = null
        clearInterval(this.presenceTimer)
        clearTimeout(this.fieldTimer)
        if (this.state.clientId) this.client.post('/realtime/presence', { client_id: this.state.clientId, table: null }).catch(() => {})
        this.changed()
      },
    }
  }

  async postPresence() {
    const p = this.presence
    if (!p || !this.state.clientId) return // posted on connect
    try {
      const res = await this.client.post('/realtime/presence', { client_id: this.state.clientId, table: p.table, record: p.record, field: p.field })
      if (this.presence === p) this.deliverViewers(p, res.viewers || [])
    } catch { /* presence is a courtesy: the record works without it */ }
  }

  onPresence(data) {
    const p = this.presence
    if (p && p.table === data.table && Number(data.id) === p.record) this.deliverViewers(p, data.viewers || [])
  }

  deliverViewers(p, viewers) {
    for (const v of viewers) this.remember(v.user_id, v.name)
    p.onViewers(viewers)
  }

  remember(id, name) {
    if (id == null || !name) return
    id = Number(id)
    this.names.delete(id)
    this.names.set(id, name)
    if (this.names.size > MAX_NAMES) this.names.delete(this.names.keys().next().value)
  }

  nameOf(id) { return this.names.get(Number(id)) ?? null }

  // who names the author of a change event of record id of tb, and when
  // ({who, when}): "you, in another window", a name presence has told,
  // else the author of the version the change stored (the versions list
  // names authors for any reader), else the user's number or the actor.
  async who(tb, id, ev) {
    const when = ev.at ? new Date(ev.at).toLocaleTimeString(locale.value, { hour: '2-digit', minute: '2-digit' }) : ''
    const by = savedBy(ev, sessionOf(this.app)?.user?.id)
    if (by.me) return { who: t('live.you_elsewhere'), when }
    if (by.actor !== undefined) return { who: by.actor || t('live.someone'), when }
    let name = this.nameOf(by.userId)
    if (!name) {
      try {
        const res = await this.client.get(`/record/${tb}/${id}/versions`, { per_page: 5 })
        name = (res.versions || []).find((v) => Number(v.id) === Number(ev.version))?.user || null
        if (name) this.remember(by.userId, name)
      } catch { /* the number will do */ }
    }
    return { who: name || t('live.user_n', { id: by.userId }), when }
  }
}

const conns = new Map()

// live(app) is the app's one live connection.
export function live(app) {
  if (!conns.has(app)) conns.set(app, new Live(app))
  return conns.get(app)
}
