// The device's copy of an application (issue 32), in IndexedDB through
// Dexie: one database per application and account, so two people who use
// one tablet never read each other's rows, and signing in as another
// account starts from nothing.
//
//   kv       cached GET answers (schema, vocabularies, the tables, the
//            app's info) and the device's own settings, by key; bounded.
//   marks    the tables kept offline: {tb, filter, checkpoint, synced_at}
//   rows     the rows pulled, as GET /sync/{tb} gives them, keyed "tb/id";
//            records created offline are here too, with a temp id
//   queue    the mutations waiting to be sent (POST /sync/push), in order
//   uploads  photos added offline, as Blobs, until uploaded
import Dexie from 'dexie'
import { sessionOf } from '../api.js'

const open = new Map()

// who: the account the app's session is of ("user:12"), or null signed out.
export function who(app) {
  const u = sessionOf(app)?.user
  return u?.id != null ? `user-${u.id}` : null
}

export function dbName(app, account) { return `strata-offline-${app}-${account}` }

// db is the app's database for the signed-in account (null when signed out).
export function db(app) {
  const account = who(app)
  if (!account) return null
  const name = dbName(app, account)
  let d = open.get(name)
  if (!d) {
    d = new Dexie(name)
    d.version(1).stores({
      kv: 'key',
      marks: 'tb',
      rows: 'k, tb',
      queue: '++n, k, state',
      uploads: 'upload_id, k',
    })
    open.set(name, d)
  }
  return d
}

export const rowKey = (tb, id) => `${tb}/${id}`

// A record created on the device is known by a temp id until the server
// answers its real one ("tmp-" and a UUID: never a number).
export const isTemp = (id) => typeof id === 'string' && id.startsWith('tmp-')

export function uuid() {
  if (globalThis.crypto?.randomUUID) return crypto.randomUUID()
  // Pages over plain http (no secure context) lack randomUUID.
  const b = crypto.getRandomValues(new Uint8Array(16))
  b[6] = (b[6] & 0x0f) | 0x40
  b[8] = (b[8] & 0x3f) | 0x80
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

// deviceId names this browser to the server for this app and account
// (kept in localStorage: it must outlive the session, and the server keys
// it by account anyway).
export function deviceId(app) {
  const key = `strata.device.${app}.${who(app)}`
  let id = null
  try { id = localStorage.getItem(key) } catch { /* disabled */ }
  if (!id) {
    id = uuid()
    try { localStorage.setItem(key, id) } catch { /* disabled: a new device each time */ }
  }
  return id
}
