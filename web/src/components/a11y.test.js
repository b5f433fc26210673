import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { flushPromises, mount } from '@vue/test-utils'
import { nextTick, ref } from 'vue'
import axe from 'axe-core'
import FieldEditor from './FieldEditor.vue'
import FilterBuilder from './FilterBuilder.vue'
import { fromFilter } from '../lib/filter.js'
import { setLocale } from '../lib/i18n.js'

// Component-level accessibility check (issue 30): axe-core over the
// editors and the filter builder in every state they take, in English
// and Italian, failing on a serious or critical violation. jsdom has no
// layout, so what needs one (contrast, scrolling regions) is left to the
// browser audit in web/e2e/a11y.mjs; names, labels, roles and nesting are
// checked here, quicker and closer to the component at fault.
async function violations(el) {
  const res = await axe.run(el, { resultTypes: ['violations'] })
  return res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id} [${v.impact}] ${n.target.join(' ')}: ${v.help}`))
}

// An axe run takes some hundred ms in jsdom, more on a loaded machine; a
// timed-out test would leave axe running under the next one.
vi.setConfig({ testTimeout: 60000 })

beforeEach(() => {
  sessionStorage.setItem('strata.sessions', JSON.stringify({ dig: { token: 't', expires_at: '2099-01-01T00:00:00Z' } }))
  globalThis.fetch = vi.fn(async () => new Response(JSON.stringify({ status: 'success', source: 'x',
    options: [{ value: 1, label: 'US 1' }, { value: 2, label: 'US 2' }] }), { status: 200, headers: { 'Content-Type': 'application/json' } }))
})
afterEach(() => { setLocale('en'); document.body.innerHTML = '' })

const base = { name: 'f', label: 'Field', db_type: 'text', type: 'text', readonly: false, required: false, hide: false, help: 'Some help' }
const editors = [
  ['text', {}, 'a'],
  ['long text', { type: 'long_text' }, 'a'],
  ['markdown', { type: 'md' }, '**a**'],
  ['link', { type: 'link_out' }, 'https://example.org'],
  ['integer', { db_type: 'int' }, 1],
  ['decimal', { db_type: 'float' }, 1.5],
  ['date', { type: 'date', db_type: 'date' }, '2020-01-02'],
  ['boolean', { type: 'boolean', db_type: 'bool' }, true],
  ['select', { type: 'select', options_source: { type: 'vocabulary' } }, 1],
  ['multi-select', { type: 'multi_select', options_source: { type: 'vocabulary' } }, [1]],
  ['slider', { type: 'slider', db_type: 'int', min: 0, max: 10 }, 3],
  ['lookup', { type: 'select', db_type: 'int', id_from_tb: 'units', options_source: { type: 'id_from_tb' } }, 1],
  ['read-only', { readonly: true }, 'a'],
]

describe('accessibility of the components (axe)', () => {
  for (const lang of ['en', 'it']) {
    for (const [name, field, value] of editors) {
      it(`${lang}: the ${name} editor, plain and with an error`, async () => {
        setLocale(lang)
        // Both states side by side (ids apart), audited in one run.
        const ws = [null, { rule: 'required', message: 'x' }].map((error, i) => mount(FieldEditor, {
          props: { field: { ...base, ...field }, modelValue: value, app: 'dig', table: 'finds', valLabel: 'US 1', error, idPrefix: 'f' + i },
          attachTo: document.body,
        }))
        await flushPromises()
        expect(document.querySelectorAll('.field-error').length).toBe(1)
        expect(await violations(document.body)).toEqual([])
        ws.forEach((w) => w.unmount())
      })
    }

    it(`${lang}: the filter builder with a nested group`, async () => {
      setLocale(lang)
      const fields = [
        { value: 'finds:label', label: 'Inventory number', type: 'text' },
        { value: 'finds:unit', label: 'Unit', type: 'select', ref_tb: 'units', ref_field: 'code' },
        { value: 'finds:found_on', label: 'Found on', type: 'date' },
      ]
      const tree = ref(fromFilter({ _and: [{ label: { _eq: 'a' } }, { _or: [{ found_on: { _gt: '2020-01-01' } }, { unit: { code: { _starts_with: 'US' } } }] }] }))
      const w = mount(FilterBuilder, { props: { modelValue: tree.value, fields, table: 'finds' }, attachTo: document.body })
      await nextTick()
      expect(w.findAll('[data-test=condition]').length).toBe(3)
      expect(await violations(document.body)).toEqual([])
    })
  }

  // The check itself must be able to fail: an unlabelled input and a
  // nameless button are what it is there to catch.
  it('reports an unlabelled control', async () => {
    const div = document.createElement('div')
    div.innerHTML = '<input type="text"><button type="button"></button>'
    document.body.append(div)
    const found = await violations(div)
    expect(found.some((v) => v.startsWith('label '))).toBe(true)
    expect(found.some((v) => v.startsWith('button-name '))).toBe(true)
  })
})
