import { t } from './i18n.js'

// v-scrollable, for a container that may scroll sideways (a wide table
// at phone width): while its content is wider than it, the container is
// a named region in the Tab order, so a keyboard user can focus it and
// scroll it with the arrow keys (WCAG 2.1.1; axe's
// scrollable-region-focusable). While it fits, it is a plain box again:
// no extra Tab stop on a desktop. The region is named by the heading
// before it (so two tables of a page get two names, in the page's
// language), or by the directive's value, or "Scrollable table".
let ids = 0

// headingBefore finds the closest heading before el in document order,
// among its earlier siblings and theirs of its ancestors, within main.
function headingBefore(el) {
  for (let n = el; n && n.tagName !== 'MAIN' && n !== document.body; n = n.parentElement) {
    for (let p = n.previousElementSibling; p; p = p.previousElementSibling) {
      if (/^H[1-6]$/.test(p.tagName)) return p
      const inner = p.querySelectorAll('h1, h2, h3, h4, h5, h6')
      if (inner.length) return inner[inner.length - 1]
    }
  }
  return null
}

function check(el) {
  if (el.scrollWidth > el.clientWidth + 1) {
    el.setAttribute('tabindex', '0')
    el.setAttribute('role', 'region')
    const h = el.__scrollableName ? null : headingBefore(el)
    if (h) {
      if (!h.id) h.id = `scrollable-heading-${++ids}`
      el.setAttribute('aria-labelledby', h.id)
      el.removeAttribute('aria-label')
    } else {
      el.setAttribute('aria-label', el.__scrollableName || t('a11y.scrollable'))
      el.removeAttribute('aria-labelledby')
    }
  } else if (el.hasAttribute('tabindex')) {
    for (const a of ['tabindex', 'role', 'aria-label', 'aria-labelledby']) el.removeAttribute(a)
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
    // No ResizeObserver (jsdom): checked on each update only.
    el.__scrollableObserver = typeof ResizeObserver === 'undefined' ? { observe() {}, disconnect() {} } : new ResizeObserver(() => check(el))
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
