import { shallowRef } from 'vue'

// The app's own confirmation and prompt dialogs, in place of
// window.confirm and window.prompt (issue 30): those are not styled, not
// translated in their buttons, and block the page. One dialog at a time;
// AppDialog (mounted once in App.vue) draws current and settles it.
export const current = shallowRef(null)

function open(opts) {
  return new Promise((resolve) => {
    if (current.value) current.value.resolve(opts.kind === 'prompt' ? null : false) // a new question replaces an open one
    current.value = { ...opts, resolve }
  })
}

// confirmDialog resolves true when the user confirms, false on Cancel or
// Escape. ok names the action ("Delete"), danger styles it as destructive.
export function confirmDialog(message, { ok, danger = false } = {}) {
  return open({ kind: 'confirm', message, ok, danger })
}

// promptDialog resolves the text entered, or null on Cancel or Escape.
export function promptDialog(label, value = '', { message = '', ok } = {}) {
  return open({ kind: 'prompt', label, value, message, ok })
}

export function settle(answer) {
  const c = current.value
  if (!c) return
  current.value = null
  c.resolve(answer)
}
