import { describe, expect, it } from 'vitest'
import { columnLabel, featureLabel, localLabel } from './pluginlabels.js'

describe('plugin labels', () => {
  const f = {
    name: 'radiocarbon', label: 'Radiocarbon dates', labels: { en: 'Radiocarbon dates', it: 'Datazioni al radiocarbonio', pt: 'Datações' },
    column_labels: { lab_code: { en: 'Lab code', it: 'Codice di laboratorio' }, notes: { en: 'Notes' } },
  }
  it('picks the language, then its language alone, then the default', () => {
    expect(featureLabel(f, 'it')).toBe('Datazioni al radiocarbonio')
    expect(featureLabel(f, 'pt-BR')).toBe('Datações')
    expect(featureLabel(f, 'de')).toBe('Radiocarbon dates')
    expect(columnLabel(f, 'lab_code', 'it')).toBe('Codice di laboratorio')
    expect(columnLabel(f, 'notes', 'it')).toBe('Notes')
  })
  it('falls back for a plugin without translations', () => {
    expect(featureLabel({ name: 'munsell', label: 'Munsell colour', labels: { en: 'Munsell colour' } }, 'it')).toBe('Munsell colour')
    expect(featureLabel({ name: 'old', label: 'Old' }, 'it')).toBe('Old') // an answer without labels at all
    expect(featureLabel({ name: 'bare' }, 'it')).toBe('bare')
    expect(columnLabel({ columns: ['x'] }, 'x', 'it')).toBe('x')
    expect(localLabel(null, 'fallback', 'it')).toBe('fallback')
  })
})
