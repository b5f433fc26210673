import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { flushPromises, mount } from '@vue/test-utils'
import FieldEditor from './FieldEditor.vue'

// The editors call the API for options: a fetch stand-in answers like the
// server's field-options route.
let calls
beforeEach(() => {
  calls = []
  sessionStorage.setItem('strata.sessions', JSON.stringify({ dig: { token: 't', expires_at: '2099-01-01T00:00:00Z' } }))
  globalThis.fetch = vi.fn(async (url) => {
    calls.push(String(url))
    const u = new URL(String(url), 'http://x')
    const q = (u.searchParams.get('q') || '').toLowerCase()
    const all = u.searchParams.get('fld') === 'unit'
      ? [{ value: 1, label: 'US 1' }, { value: 2, label: 'US 2' }, { value: 12, label: 'US 12' }]
      : [{ value: 'bronze', label: 'bronze' }, { value: 'iron', label: 'iron' }]
    const options = all.filter((o) => o.label.toLowerCase().includes(q))
    return new Response(JSON.stringify({ status: 'success', source: 'x', options }), { status: 200, headers: { 'Content-Type': 'application/json' } })
  })
})
afterEach(() => { vi.useRealTimers() })

const base = { name: 'f', label: 'Field', db_type: 'text', type: 'text', readonly: false, required: false, hide: false, help: '' }
const mk = (field, modelValue, extra = {}) => mount(FieldEditor, { props: { field: { ...base, ...field }, modelValue, app: 'dig', table: 'finds', ...extra }, attachTo: document.body })
const last = (w) => w.emitted('update:modelValue')?.at(-1)?.[0]

describe('FieldEditor', () => {
  it('labels every editor and shows its error next to it', () => {
    const w = mk({ name: 'label', label: 'Inventory number', required: true }, '', { error: { rule: 'required', message: 'x' } })
    const input = w.find('input')
    expect(w.find(`label[for="${input.attributes('id')}"]`).text()).toContain('Inventory number')
    expect(input.attributes('aria-invalid')).toBe('true')
    const err = w.find('.field-error')
    expect(err.text()).toBe('Required.')
    expect(input.attributes('aria-describedby')).toBe(err.attributes('id'))
  })

  it('numbers, dates and booleans', async () => {
    const n = mk({ db_type: 'float' }, 1)
    expect(n.find('input').attributes('type')).toBe('number')
    expect(n.find('input').attributes('step')).toBe('any')
    await n.find('input').setValue('12.5')
    expect(last(n)).toBe(12.5)
    const d = mk({ type: 'date', db_type: 'date' }, '2020-01-02')
    expect(d.find('input').attributes('type')).toBe('date')
    const b = mk({ type: 'boolean', db_type: 'bool' }, false)
    await b.find('input[type=checkbox]').setValue(true)
    expect(last(b)).toBe(true)
  })

  it('a select takes its options from the vocabulary', async () => {
    const w = mk({ name: 'material', type: 'select', options_source: { type: 'vocabulary', set: 'materials' } }, 'iron')
    await flushPromises()
    expect(w.findAll('option').map((o) => o.text())).toEqual(['—', 'bronze', 'iron'])
    await w.find('select').setValue('bronze')
    expect(last(w)).toBe('bronze')
    expect(calls[0]).toContain('/dig/api/record/finds/field-options?fld=material')
  })

  it('a multi-select toggles values', async () => {
    const w = mk({ name: 'materials', type: 'multi_select', options_source: { type: 'vocabulary' } }, ['iron'])
    await flushPromises()
    const boxes = w.findAll('input[type=checkbox]')
    expect(boxes.map((b) => b.element.checked)).toEqual([false, true])
    await boxes[0].setValue(true)
    expect(last(w)).toEqual(['iron', 'bronze'])
  })

  it('a lookup searches the referenced table and picks with the keyboard', async () => {
    vi.useFakeTimers()
    const w = mk({ name: 'unit', type: 'select', db_type: 'int', id_from_tb: 'units', options_source: { type: 'id_from_tb' } }, 1, { valLabel: 'US 1' })
    const input = w.find('input[role=combobox]')
    expect(input.element.value).toBe('US 1')
    await input.setValue('12')
    await vi.advanceTimersByTimeAsync(250)
    await flushPromises()
    expect(calls.at(-1)).toContain('q=12')
    expect(w.findAll('[role=option]').map((o) => o.text())).toEqual(['US 12'])
    await input.trigger('keydown', { key: 'Enter' })
    expect(last(w)).toBe(12)
    expect(input.element.value).toBe('US 12')
  })

  // ---- Issue 30: lookups act only on the text in the box ----
  describe('lookup (issue 30)', () => {
    const lookup = (value = null, label = null) =>
      mk({ name: 'unit', label: 'Unit', type: 'select', db_type: 'int', id_from_tb: 'units', options_source: { type: 'id_from_tb' } }, value, { valLabel: label })
    // slow(q → ms): the stand-in answers those texts late.
    const slow = (delays) => {
      const inner = globalThis.fetch
      globalThis.fetch = vi.fn(async (url) => {
        const q = new URL(String(url), 'http://x').searchParams.get('q') || ''
        await new Promise((r) => setTimeout(r, delays[q] ?? 10))
        return inner(url)
      })
    }

    it('ArrowDown and Enter typed before the answer pick from the list of the text, not the one shown', async () => {
      vi.useFakeTimers()
      const w = lookup()
      const input = w.find('input[role=combobox]')
      await input.trigger('focus')
      await vi.advanceTimersByTimeAsync(50)
      expect(w.findAll('[role=option]').map((o) => o.text())).toEqual(['US 1', 'US 2', 'US 12'])
      await input.setValue('US 12') // faster than the 200 ms pause
      await input.trigger('keydown', { key: 'ArrowDown' })
      await input.trigger('keydown', { key: 'Enter' })
      expect(last(w)).toBeUndefined() // nothing picked from the stale list
      await vi.advanceTimersByTimeAsync(50)
      expect(last(w)).toBe(12)
      expect(input.element.value).toBe('US 12')
    })

    it('a late answer for an older text is dropped', async () => {
      vi.useFakeTimers()
      slow({ 'US 1': 1000 })
      const w = lookup()
      const input = w.find('input[role=combobox]')
      await input.setValue('US 1')
      await vi.advanceTimersByTimeAsync(250) // the search for "US 1" is on its way
      await input.setValue('US 2')
      await vi.advanceTimersByTimeAsync(250)
      expect(w.findAll('[role=option]').map((o) => o.text())).toEqual(['US 2'])
      await vi.advanceTimersByTimeAsync(1000) // "US 1" answers now
      expect(w.findAll('[role=option]').map((o) => o.text())).toEqual(['US 2'])
      await input.trigger('keydown', { key: 'Enter' })
      expect(last(w)).toBe(2)
    })

    it('text that names no record is marked at once and holds no id', async () => {
      const w = lookup(1, 'US 1')
      const input = w.find('input[role=combobox]')
      await input.setValue('US 44')
      expect(last(w)).toBe('') // the previous record's id is gone
      await input.trigger('blur')
      await flushPromises()
      const err = w.find('.field-error')
      expect(err.text()).toBe('No record of units matches “US 44”: choose one from the list.')
      expect(input.attributes('aria-invalid')).toBe('true')
      expect(input.attributes('aria-describedby')).toBe(err.attributes('id'))
      expect(last(w)).toBe('')
    })

    it('the exact label, in any case and with spaces around it, resolves on blur', async () => {
      const w = lookup()
      const input = w.find('input[role=combobox]')
      await input.setValue('  us 12 ')
      await input.trigger('blur')
      await flushPromises()
      expect(last(w)).toBe(12)
      expect(input.element.value).toBe('US 12')
      expect(w.find('.field-error').exists()).toBe(false)
    })
  })

  it('markdown has a sanitised preview', async () => {
    const w = mk({ name: 'description', type: 'md' }, 'A **bold** [link](javascript:alert(1)) <img src=x onerror=alert(1)>')
    await w.find('[data-test=md-preview]').trigger('click')
    const html = w.find('.md-preview').html()
    expect(html).toContain('<strong>bold</strong>')
    expect(html).not.toContain('javascript:')
    expect(html).not.toContain('<img')
  })
})
