// The client of Strata's public API. Session tokens live in
// sessionStorage, one per application, so each browser tab has its own
// (SPEC §5.1: no cookies); a token is refreshed when less than 30 minutes
// of it remain.
import { reactive } from 'vue'
import { locale } from './i18n.js'

export const REFRESH_BEFORE_MS = 30 * 60 * 1000
const STORAGE_KEY = 'strata.sessions'
// A failed refresh is not retried at once: the token still works until it
// expires, and a server that refused once will likely refuse again.
const RETRY_REFRESH_MS = 60 * 1000

export class ApiError extends Error {
  constructor(status, body, network = false) {
    super(body?.message || body?.code || 'request failed')
    this.status = status
    this.body = body || {}
    this.code = this.body.code
    this.network = network
  }
}

function readAll() {
  try { return JSON.parse(sessionStorage.getItem(STORAGE_KEY) || '{}') || {} } catch { return {} }
}
function writeAll(all) {
  try { sessionStorage.setItem(STORAGE_KEY, JSON.stringify(all)) } catch { /* full or disabled */ }
}

// sessions is the reactive view of the stored sessions, by app.
export const sessions = reactive(readAll())

export function sessionOf(app) { return sessions[app] || null }

export function saveSession(app, { token, expires_at, user }) {
  sessions[app] = { token, expires_at, user, refreshed_at: Date.now() }
  writeAll({ ...sessions })
}

export function dropSession(app) {
  delete sessions[app]
  writeAll({ ...sessions })
}

// needsRefresh: less than 30 minutes left (expires_at is RFC 3339 or unix seconds).
export function needsRefresh(session, now = Date.now()) {
  if (!session?.expires_at) return false
  const exp = typeof session.expires_at === 'number' ? session.expires_at * 1000 : Date.parse(session.expires_at)
  if (Number.isNaN(exp)) return false
  return exp - now < REFRESH_BEFORE_MS && now - (session.refresh_tried_at || 0) >= RETRY_REFRESH_MS
}

const inflight = {}

// The offline side (lib/offline/intercept.js, issue 32): asked before a
// call, after a GET, after a call that found no network, and for uploads.
let offlineHook = null
export function setOfflineHook(h) { offlineHook = h }

// refresh renews the app's token; concurrent callers share one request.
export async function refresh(app) {
  const s = sessionOf(app)
  if (!s) return
  if (!inflight[app]) {
    s.refresh_tried_at = Date.now()
    writeAll({ ...sessions })
    inflight[app] = raw('GET', `/${encodeURIComponent(app)}/api/auth/refresh`, { token: s.token })
      .then((body) => saveSession(app, body))
      .finally(() => { delete inflight[app] })
  }
  return inflight[app]
}

// listeners of "the session ended" (401): the router sends the user to sign in.
const endedListeners = new Set()
export function onSessionEnded(fn) { endedListeners.add(fn); return () => endedListeners.delete(fn) }
// endSession ends the app's session as a 401 would: the live stream's final
// `unauthorized` event (a revoke, a password change) leads to the same
// sign-in page and banner as a refused request.
export function endSession(app, e) {
  dropSession(app)
  endedListeners.forEach((fn) => fn(app, e))
}

async function raw(method, url, { body, token, headers = {} } = {}) {
  // The interface's language: the server shows plugin labels in it
  // (docs/api.md, "Plugin labels in other languages").
  const h = { Accept: 'application/json', 'Accept-Language': locale.value, ...headers }
  if (token) h.Authorization = 'Bearer ' + token
  let payload
  if (typeof Blob !== 'undefined' && body instanceof Blob) {
    // bytes as they are (a resumable upload's chunk, /sync/uploads)
    h['Content-Type'] = 'application/octet-stream'
    payload = body
  } else if (body !== undefined) {
    h['Content-Type'] = 'application/json'
    payload = JSON.stringify(body)
  }
  let res
  try {
    res = await fetch(url, { method, headers: h, body: payload, credentials: 'omit' })
  } catch (e) {
    throw new ApiError(0, { code: 'network_error', message: String(e) }, true)
  }
  let data = {}
  const text = await res.text()
  if (text) {
    try { data = JSON.parse(text) } catch { data = { code: 'invalid_response', message: text.slice(0, 200) } }
  }
  if (!res.ok || data.status === 'error') throw new ApiError(res.status, data)
  if (res.headers.get('ETag')) data._etag = res.headers.get('ETag')
  return data
}

function query(params) {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '') continue
    if (Array.isArray(v)) v.forEach((x) => q.append(k, x))
    else q.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v))
  }
  const s = q.toString()
  return s ? '?' + s : ''
}

// api(app) is the client of one application: paths are relative to /<app>/api.
export function api(app) {
  const base = `/${encodeURIComponent(app)}/api`
  async function call(method, path, { body, params, headers, auth = true } = {}) {
    let token
    if (auth) {
      if (needsRefresh(sessionOf(app))) {
        try { await refresh(app) } catch { /* the old token may still work */ }
      }
      token = sessionOf(app)?.token
    }
    if (offlineHook && auth) {
      const local = await offlineHook.before(app, method, path, { params, body, headers })
      if (local?.answer !== undefined) return local.answer
      if (local?.path) path = local.path
      if (local?.body !== undefined) body = local.body
    }
    try {
      const res = await raw(method, base + path + query(params), { body, token, headers })
      if (offlineHook && auth && method === 'GET') offlineHook.after(app, path, params, res).catch(() => {})
      return res
    } catch (e) {
      if (auth && token && e.status === 401) {
        dropSession(app)
        endedListeners.forEach((fn) => fn(app, e))
      }
      if (e.network && offlineHook && auth) {
        const local = await offlineHook.fallback(app, method, path, { params, body, headers })
        if (local !== undefined) return local
      }
      throw e
    }
  }
  // token: the session's, renewed first when it is about to expire.
  async function token() {
    if (needsRefresh(sessionOf(app))) {
      try { await refresh(app) } catch { /* the old token may still work */ }
    }
    return sessionOf(app)?.token
  }
  function ended(tok, e) {
    if (tok && e.status === 401) {
      dropSession(app)
      endedListeners.forEach((fn) => fn(app, e))
    }
  }

  // upload sends a multipart form (the file as `file`, plus other fields)
  // with XMLHttpRequest, the one browser API that reports upload progress:
  // onProgress(sent, total) as the bytes go.
  async function upload(path, file, opts = {}) {
    const { isOffline } = offlineHook?.state || {}
    if (offlineHook && isOffline?.()) {
      const local = await offlineHook.upload(app, path, file)
      if (local !== undefined) return local
    }
    try { return await send(path, file, opts) } catch (e) {
      if (!e.network || !offlineHook) throw e
      const local = await offlineHook.upload(app, path, file)
      if (local === undefined) throw e
      return local
    }
  }
  async function send(path, file, { fields = {}, onProgress, method = 'POST' } = {}) {
    const tok = await token()
    const form = new FormData()
    for (const [k, v] of Object.entries(fields)) if (v !== undefined && v !== null && v !== '') form.append(k, v)
    form.append('file', file, file.name)
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest()
      xhr.open(method, base + path)
      xhr.setRequestHeader('Accept', 'application/json')
      if (tok) xhr.setRequestHeader('Authorization', 'Bearer ' + tok)
      if (onProgress) xhr.upload.onprogress = (ev) => onProgress(ev.loaded, ev.lengthComputable ? ev.total : file.size)
      xhr.onerror = () => reject(new ApiError(0, { code: 'network_error' }, true))
      xhr.onload = () => {
        let data = {}
        try { data = xhr.responseText ? JSON.parse(xhr.responseText) : {} } catch { data = { code: 'invalid_response' } }
        if (xhr.status >= 400 || data.status === 'error') {
          const e = new ApiError(xhr.status, data)
          ended(tok, e)
          reject(e)
        } else resolve(data)
      }
      xhr.send(form)
    })
  }

  // blob fetches a file-like answer (a PDF, an archive) with the session's
  // header, for routes a plain link cannot open.
  async function blob(path, params) {
    const tok = await token()
    let res
    try {
      res = await fetch(base + path + query(params), { headers: tok ? { Authorization: 'Bearer ' + tok } : {}, credentials: 'omit' })
    } catch (e) { throw new ApiError(0, { code: 'network_error', message: String(e) }, true) }
    if (!res.ok) {
      let data = {}
      try { data = await res.json() } catch { /* not JSON */ }
      const e = new ApiError(res.status, data)
      ended(tok, e)
      throw e
    }
    return res.blob()
  }

  return {
    upload,
    blob,
    get: (path, params, opts) => call('GET', path, { ...opts, params }),
    post: (path, body, opts) => call('POST', path, { ...opts, body }),
    put: (path, body, opts) => call('PUT', path, { ...opts, body }),
    del: (path, opts) => call('DELETE', path, opts),
    call,
  }
}

// instance endpoints (/api/...), all public.
export const instance = {
  apps: () => raw('GET', '/api/auth/apps'),
}

// startRefreshTimer checks every minute whether a token of this tab
// needs renewing, so an idle tab keeps its session.
export function startRefreshTimer(intervalMs = 60 * 1000) {
  return setInterval(() => {
    for (const app of Object.keys(sessions)) {
      if (needsRefresh(sessionOf(app))) refresh(app).catch(() => {})
    }
  }, intervalMs)
}
