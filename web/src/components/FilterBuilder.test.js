import { describe, expect, it } from 'vitest'
import { mount } from '@vue/test-utils'
import { nextTick, ref } from 'vue'
import FilterBuilder from './FilterBuilder.vue'
import { fromFilter, toFilter } from '../lib/filter.js'

const fields = [
  { value: 'finds:label', label: 'Inventory number', type: 'text' },
  { value: 'finds:unit', label: 'Unit', type: 'select', ref_tb: 'units', ref_field: 'code' },
  { value: 'finds:complete', label: 'Complete', type: 'boolean' },
  { value: 'finds:found_on', label: 'Found on', type: 'date' },
  { value: 'finds_radiocarbon:bp', label: 'Age (BP)', type: 'text' },
]

function make(filter = null) {
  const tree = ref(fromFilter(filter))
  const w = mount(FilterBuilder, { props: { modelValue: tree.value, fields, table: 'finds' } })
  return { w, tree }
}

describe('FilterBuilder', () => {
  it('offers the fields, the field of a lookup and plugin fields', () => {
    const { w } = make()
    return w.find('[data-test=add-condition]').trigger('click').then(() => {
      const labels = w.findAll('[data-test=cond-field] option').map((o) => o.text())
      expect(labels).toEqual(['Inventory number', 'Unit', 'Unit › code', 'Complete', 'Found on', 'finds_radiocarbon › Age (BP)'])
    })
  })

  it('builds a nested condition from clicks and typing', async () => {
    const { w, tree } = make()
    await w.find('[data-test=add-condition]').trigger('click')
    await w.find('[data-test=cond-value]').setValue('amph')
    await w.find('[data-test=add-group]').trigger('click')
    const group = w.find('[data-test=filter-group-1]')
    await group.find('[data-test=join]').setValue('or')
    await group.find('[data-test=cond-field]').setValue('unit.code')
    await group.find('[data-test=cond-op]').setValue('_starts_with')
    await group.find('[data-test=cond-value]').setValue('US 1')
    await group.find('[data-test=add-condition]').trigger('click')
    const second = group.findAll('[data-test=condition]')[1]
    await second.find('[data-test=cond-field]').setValue('complete')
    await nextTick()
    expect(second.findAll('[data-test=cond-op] option').map((o) => o.element.value)).not.toContain('_icontains')
    await second.find('[data-test=cond-value]').setValue('true')
    expect(toFilter(tree.value)).toEqual({ _and: [{ label: { _icontains: 'amph' } },
      { _or: [{ unit: { code: { _starts_with: 'US 1' } } }, { complete: { _eq: 'true' } }] }] })
  })

  it('hides the value of flag operators, uses a date box for dates, removes conditions', async () => {
    const { w, tree } = make({ found_on: { _gte: '2020-01-01' }, label: { _nempty: true } })
    const conds = w.findAll('[data-test=condition]')
    expect(conds[0].find('[data-test=cond-value]').attributes('type')).toBe('date')
    expect(conds[1].find('[data-test=cond-value]').exists()).toBe(false)
    await conds[0].find('[data-test=remove-condition]').trigger('click')
    expect(toFilter(tree.value)).toEqual({ label: { _nempty: true } })
  })
})
