import { describe, expect, it } from 'vitest'
import { mount } from '@vue/test-utils'
import { nextTick, ref } from 'vue'
import { scrollable } from './scrollable.js'

// jsdom lays nothing out: the widths a browser would measure are set by hand.
function widths(el, scroll, client) {
  Object.defineProperty(el, 'scrollWidth', { configurable: true, value: scroll })
  Object.defineProperty(el, 'clientWidth', { configurable: true, value: client })
}

describe('v-scrollable', () => {
  const make = (name) => {
    const rows = ref(1)
    const w = mount({
      setup: () => ({ rows, name }),
      template: `<main><h2>Fields of Finds</h2><div class="x"><h2>Relations</h2></div>
        <div v-scrollable="name" class="wrap"><table><tr v-for="r in rows" :key="r"><td>{{ r }}</td></tr></table></div></main>`,
    }, { global: { directives: { scrollable } }, attachTo: document.body })
    return { w, rows, el: w.find('.wrap').element }
  }

  it('is a plain box while its content fits, a focusable region named by the heading before it once it scrolls', async () => {
    const { w, rows, el } = make(undefined)
    expect(el.hasAttribute('tabindex')).toBe(false)
    widths(el, 900, 390)
    rows.value = 2
    await nextTick()
    expect(el.getAttribute('tabindex')).toBe('0')
    expect(el.getAttribute('role')).toBe('region')
    const h = document.getElementById(el.getAttribute('aria-labelledby'))
    expect(h.textContent).toBe('Relations')
    widths(el, 390, 390)
    rows.value = 3
    await nextTick()
    for (const a of ['tabindex', 'role', 'aria-labelledby']) expect(el.hasAttribute(a)).toBe(false)
    w.unmount()
  })

  it('takes the name it is given', async () => {
    const { w, rows, el } = make('Log entries')
    widths(el, 900, 390)
    rows.value = 2
    await nextTick()
    expect(el.getAttribute('aria-label')).toBe('Log entries')
    expect(el.hasAttribute('aria-labelledby')).toBe(false)
    w.unmount()
  })
})
