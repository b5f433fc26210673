import { describe, expect, it } from 'vitest'
import { dictionaries, errorText, setLocale, t, tn } from './i18n.js'

// Keys that read the same in both languages (symbols, the product name).
const SAME = new Set(['app.title', 'op._gt', 'op._lt', 'op._gte', 'op._lte', 'rec.none', 'c14.sigma1', 'c14.sigma2', 'c14.calbp'])

describe('i18n', () => {
  it('has every English message in Italian', () => {
    const missing = Object.keys(dictionaries.en).filter((k) => !SAME.has(k) && !(k in dictionaries.it))
    expect(missing).toEqual([])
    expect(Object.keys(dictionaries.it).filter((k) => !(k in dictionaries.en))).toEqual([])
  })
  it('keeps the placeholders of each message in its translation', () => {
    const names = (s) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort()
    for (const [k, v] of Object.entries(dictionaries.it)) expect([k, names(v)]).toEqual([k, names(dictionaries.en[k])])
  })
  it('fills an error message from the error’s own fields', () => {
    setLocale('en')
    expect(errorText({ code: 'invalid_origin', body: { code: 'invalid_origin', origin: 'ftp://x' } })).toBe('Not an http(s) origin: ftp://x')
    expect(errorText({ code: 'invalid_setting', body: { setting: 'maxImageSize', detail: 'too large' } })).toBe('The setting “maxImageSize” is not valid: too large')
    expect(errorText({ code: 'something_new', body: {} })).toBe('Something went wrong (something_new).')
    setLocale('it')
    expect(errorText({ code: 'self_relation', body: {} })).toBe('Un’unità non può essere in rapporto con se stessa.')
    expect(t('rs.5')).toBe('copre')
    setLocale('en')
  })
})

describe('tn', () => {
  it('chooses the plural form of the language', () => {
    setLocale('en')
    expect(tn('chrono.total', 1)).toBe('1 dated record')
    expect(tn('chrono.total', 2)).toBe('2 dated records')
    expect(tn('files.uploaded', 0)).toBe('0 files uploaded.')
    setLocale('it')
    expect(tn('chrono.total', 1)).toBe('1 scheda datata')
    expect(tn('files.uploaded', 3)).toBe('3 file caricati.')
    setLocale('en')
  })
})
