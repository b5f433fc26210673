import { t } from './i18n.js'

// v-scrollable, for a container that may scroll sideways (a wide table
// at phone width): while its content is wider than it, the container is
// a named region in the Tab order, so a keyboard user can focus it and
// scroll it with the arrow keys (WCAG 2.1.1; axe's
// scrollable-region-focusable). While it fits, it is a plain box again:
// no extra Tab stop on a desktop. The value, when given, names the
// region; otherwise a generic "Scrollable table".
function check(el) {
  const name = el.__scrollableName || t('a11y.scrollable')
  if (el.scrollWidth > el.clientWidth + 1) {
    el.setAttribute('tabindex', '0')
    el.setAttribute('role', 'region')
    el.setAttribute('aria-label', name)
  } else if (el.hasAttribute('tabindex')) {
    el.removeAttribute('tabindex')
    el.removeAttribute('role')
    el.removeAttribute('aria-label')
  }
}

function observe(el) {
  // The container's own size (the window) and its content's (rows
  // loaded, columns added) both change whether it scrolls.
  el.__scrollableObserver.disconnect()
  el.__scrollableObserver.observe(el)
  for (const c of el.children) el.__scrollableObserver.observe(c)
}

export const scrollable = {
  mounted(el, binding) {
    el.__scrollableName = binding.value
    el.__scrollableObserver = new ResizeObserver(() => check(el))
    observe(el)
    check(el)
  },
  updated(el, binding) {
    el.__scrollableName = binding.value
    observe(el)
    check(el)
  },
  unmounted(el) { el.__scrollableObserver?.disconnect() },
}
