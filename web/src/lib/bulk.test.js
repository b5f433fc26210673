import { describe, expect, it } from 'vitest'
import { batchRefusals, deleteOutcome, editBatch, pageState, toggled } from './bulk.js'
import { ruleText } from './fields.js'
import { errorText, setLocale, t, tn } from './i18n.js'

describe('selection', () => {
  it.each([
    [[], ['1', '2'], 'none'],
    [['1'], ['1', '2'], 'some'],
    [['1', '2'], ['1', '2'], 'all'],
    [['1', '2', '9'], ['1', '2'], 'all'], // rows of another page do not count
    [['9'], ['1', '2'], 'none'],
  ])('selected %j of page %j is %s', (sel, ids, want) => {
    expect(pageState(new Set(sel), ids)).toBe(want)
  })
  it('adds and removes the page without touching other rows or the input', () => {
    const before = new Set(['9'])
    const on = toggled(before, ['1', '2'], true)
    expect([...on].sort()).toEqual(['1', '2', '9'])
    expect([...toggled(on, ['1', '2'], false)]).toEqual(['9'])
    expect([...before]).toEqual(['9'])
  })
})

describe('editBatch', () => {
  it('sets one field on each record, in order, with safe urls', () => {
    expect(editBatch('finds', ['3', '7'], 'material', 'bronze')).toEqual({
      requests: [
        { method: 'POST', url: '/record/finds/3', body: { core: { material: 'bronze' } } },
        { method: 'POST', url: '/record/finds/7', body: { core: { material: 'bronze' } } },
      ],
    })
    expect(editBatch('a/b', ['1?x'], 'f', null).requests[0].url).toBe('/record/a%2Fb/1%3Fx')
  })
})

describe('batchRefusals', () => {
  setLocale('en')
  const ids = ['10', '11', '12']
  const i18n = { t, tn, lang: 'en' }
  const weight = { name: 'weight', label: 'Weight (g)', db_type: 'float', min: 0 }
  it('marks every row with a validation error, in the user language, with the field’s bound', () => {
    const err = { code: 'validation_failed', body: { errors: [
      { index: 0, field: 'weight', label: 'Weight (g)', rule: 'min', message: 'at least 0' },
      { index: 2, field: 'weight', label: 'Weight (g)', rule: 'min', message: 'at least 0' },
      { index: 2, field: 'unit', label: 'Unit', rule: 'required' },
      { index: 9, field: 'x', rule: 'min' }, // outside the batch: ignored
    ] } }
    expect(batchRefusals(err, ids, weight, i18n, errorText)).toEqual({
      10: 'Weight (g): Must be at least 0.',
      12: 'Weight (g): Must be at least 0. Unit: Required.',
    })
    setLocale('it')
    expect(batchRefusals(err, ids, weight, { t, tn, lang: 'it' }, errorText)[10]).toBe('Weight (g): Deve essere almeno 0.')
    setLocale('en')
  })
  it('marks the one row that stopped the batch', () => {
    const err = { code: 'not_enough_privilege', body: { code: 'not_enough_privilege', index: 1 } }
    expect(batchRefusals(err, ids, weight, i18n, errorText)).toEqual({ 11: 'You do not have the privilege to do this.' })
  })
  it('marks no row when the failure names none', () => {
    expect(batchRefusals({ code: 'batch_too_large', body: {} }, ids, weight, i18n, errorText)).toEqual({})
    expect(batchRefusals({ network: true }, ids, weight, i18n, errorText)).toEqual({})
  })
  it('falls back to the server message for an unknown rule', () => {
    expect(ruleText({ rule: 'plugin_rule', message: 'bad date' }, null, i18n)).toBe('bad date')
    expect(ruleText({ rule: 'min', message: 'at least 0' }, null, i18n)).toBe('Too small. at least 0')
  })
})

describe('deleteOutcome', () => {
  setLocale('en')
  it('reads a partial delete: what went and why the rest stayed', () => {
    const out = deleteOutcome({ deleted_ids: [1, 2], denied_ids: [3], not_found_ids: [4] }, t)
    expect(out.deleted).toEqual(['1', '2'])
    expect(out.notes).toEqual({ 3: t('bulk.denied_delete'), 4: t('bulk.not_found') })
    expect(out.notes[3]).toMatch(/may not delete/)
  })
  it('reads a refusal body that lists only denied ids', () => {
    expect(deleteOutcome({ denied_ids: [5] }, t)).toEqual({ deleted: [], notes: { 5: t('bulk.denied_delete') } })
  })
})
