import { describe, expect, it } from 'vitest'
import {
  catalogOf, configFromForm, errorTarget, filterOf, formFromConfig, formProblems, formatSize,
  newAuthor, normalizeORCID, orcidProblem, parseKeywords, secretOf, validAAT, validORCID,
} from './publish.js'

// The setting of core/server/publish_test.go (pubConfig), as GET returns it.
const CONFIG = {
  title: 'Excavations at Test Hill', description: 'Units & finds', licence: 'CC-BY-4.0', contact: 'data@example.org',
  publisher: 'Test University', language: 'en', keywords: ['archaeology', 'excavation'],
  authors: [
    { name: 'Carver, Martin', given_name: 'Martin', family_name: 'Carver', orcid: '0000-0002-1825-0097', affiliation: 'Test University' },
    { name: 'Harris, Edward', given_name: 'Edward', family_name: 'Harris' },
  ],
  tables: [
    { name: 'trenches', kind: 'site', fields: ['code'], filter: { status: { _eq: 'finished' } } },
    { name: 'units', kind: 'stratigraphic_unit', term: { id: 'http://vocab.getty.edu/aat/300411702', label: 'stratigraphic units' },
      fields: ['code', 'description'], filter: { trench: { status: { _eq: 'finished' } } } },
  ],
  doi: { provider: 'datacite', base_url: 'https://api.test.datacite.org', repository_id: 'TEST.REPO', prefix: '10.5072' },
}

const TABLES = [{ name: 'trenches', label: 'Trenches' }, { name: 'units', label: 'Units' }, { name: 'finds', label: 'Finds' }]
const SEARCH = {
  trenches: [{ value: 'trenches:code', label: 'Code', type: 'text' }, { value: 'trenches:status', label: 'Status', type: 'select' }],
  units: [{ value: 'units:code', label: 'Code' }, { value: 'units:description', label: 'Description' }, { value: 'units:trench', label: 'Trench', ref_tb: 'trenches' },
    { value: 'units_radiocarbon:lab_code', label: 'Lab code' }, { value: 'units_radiocarbon:bp', label: 'Age (BP)' }],
  finds: [{ value: 'finds:label', label: 'Inventory number' }, { value: 'finds:secret', label: 'Private notes' }],
}

describe('ORCID', () => {
  it.each([
    ['0000-0002-1825-0097', ''], // ORCID's own example
    ['0000-0001-5109-3700', ''],
    ['0000-0002-1694-233X', ''], // check digit 10 is X
    ['0000-0002-1694-233x', ''], // typed lower case
    ['https://orcid.org/0000-0002-1825-0097', ''], // pasted as a link
    ['  0000-0002-1825-0097 ', ''],
    ['', ''], // optional
    ['0000-0002-1825-0098', 'checksum'],
    ['0000-0002-1694-2330', 'checksum'],
    ['0000-0002-1825-009', 'format'],
    ['0000000218250097', 'format'],
    ['0000-0002-1825-00977', 'format'],
    ['X000-0002-1825-0097', 'format'],
    ['０000-0002-1825-0097', 'format'], // a full-width digit
    ['0000-0002-1825-0097\n', ''],
    ['<script>', 'format'],
  ])('%j: %j', (id, want) => {
    expect(orcidProblem(id)).toBe(want)
    expect(validORCID(id)).toBe(want === '' && id.trim() !== '')
  })
  it('normalizes as the server does', () => {
    expect(normalizeORCID(' http://orcid.org/0000-0002-1694-233x ')).toBe('0000-0002-1694-233X')
  })
  it('stays quick on a huge input', () => {
    expect(orcidProblem('1'.repeat(1e6))).toBe('format')
  })
})

describe('small checks', () => {
  it('knows AAT URIs', () => {
    expect(validAAT('http://vocab.getty.edu/aat/300411702')).toBe(true)
    expect(validAAT('https://vocab.getty.edu/aat/300411702')).toBe(false)
    expect(validAAT('javascript:alert(1)')).toBe(false)
    expect(validAAT('http://vocab.getty.edu/aat/300411702/')).toBe(false)
  })
  it('reads keywords', () => {
    expect(parseKeywords(' archaeology, ,excavation,archaeology , Pompéi ')).toEqual(['archaeology', 'excavation', 'Pompéi'])
    expect(parseKeywords('')).toEqual([])
  })
  it('formats sizes', () => {
    expect([0, 1023, 1024, 15000, 5 * 1024 * 1024, null].map(formatSize)).toEqual(['0 B', '1023 B', '1.0 KB', '15 KB', '5.0 MB', ''])
  })
})

describe('catalogOf', () => {
  it('lists each table with its own fields, its plugin tables after it', () => {
    const cat = catalogOf(TABLES, SEARCH)
    expect(cat.map((t) => [t.name, t.parent, t.fields.map((f) => f.name)])).toEqual([
      ['trenches', '', ['code', 'status']],
      ['units', '', ['code', 'description', 'trench']],
      ['units_radiocarbon', 'units', ['lab_code', 'bp']],
      ['finds', '', ['label', 'secret']],
    ])
  })
})

describe('form ↔ setting', () => {
  const cat = catalogOf(TABLES, SEARCH)
  it('reads a setting back exactly as it was', () => {
    const form = formFromConfig(CONFIG, cat)
    expect(configFromForm(form)).toEqual(CONFIG)
  })
  it('makes nothing public by default', () => {
    const form = formFromConfig({ title: 'Dig', licence: 'CC-BY-4.0', authors: [], keywords: [], tables: [] }, cat)
    expect(form.tables.every((t) => !t.public && t.fields.every((f) => !f.public))).toBe(true)
    const sent = configFromForm(form)
    expect(sent.tables).toEqual([])
    expect(sent.doi).toEqual({ provider: '' })
  })
  it('sends only ticked fields of public tables, in the table’s order', () => {
    const form = formFromConfig(CONFIG, cat)
    const finds = form.tables.find((t) => t.name === 'finds')
    finds.public = true
    finds.kind = 'find'
    finds.fields.find((f) => f.name === 'label').public = true // "secret" stays unticked
    const units = form.tables.find((t) => t.name === 'units')
    units.fields.find((f) => f.name === 'trench').public = true
    units.fields.find((f) => f.name === 'code').public = false
    form.tables.find((t) => t.name === 'trenches').public = false
    const sent = configFromForm(form)
    expect(sent.tables.map((t) => [t.name, t.fields])).toEqual([['units', ['description', 'trench']], ['finds', ['label']]])
    expect(JSON.stringify(sent)).not.toContain('secret')
    expect(JSON.stringify(sent)).not.toContain('trenches')
  })
  it('keeps what the catalog no longer has, so the server can say so', () => {
    const form = formFromConfig({ ...CONFIG, tables: [...CONFIG.tables, { name: 'gone', kind: 'other', fields: ['x'] }] }, cat)
    const gone = form.tables.find((t) => t.name === 'gone')
    expect(gone).toMatchObject({ known: false, public: true })
    const t = formFromConfig({ ...CONFIG, tables: [{ name: 'units', kind: 'other', fields: ['code', 'dropped'] }] }, cat).tables.find((x) => x.name === 'units')
    expect(t.fields.map((f) => [f.name, f.known, f.public])).toEqual([['code', true, true], ['description', true, false], ['trench', true, false], ['dropped', false, true]])
    expect(configFromForm(formFromConfig({ ...CONFIG, tables: [{ name: 'units', kind: 'other', fields: ['code', 'dropped'] }] }, cat)).tables[0].fields).toEqual(['code', 'dropped'])
  })
  it('trims what is typed and normalizes ORCID iDs', () => {
    const form = formFromConfig(CONFIG, cat)
    form.title = '  Title  '
    form.keywords = 'a, b,, a'
    form.language = ' IT '
    const a = newAuthor()
    a.name = ' Rossi, Anna '
    a.orcid = 'https://orcid.org/0000-0002-1694-233x'
    form.authors.push(a)
    const sent = configFromForm(form)
    expect(sent.title).toBe('Title')
    expect(sent.keywords).toEqual(['a', 'b'])
    expect(sent.language).toBe('it')
    expect(sent.authors[2]).toEqual({ name: 'Rossi, Anna', orcid: '0000-0002-1694-233X' })
  })
  it('drops an empty term and the DOI details without a provider', () => {
    const form = formFromConfig(CONFIG, cat)
    const units = form.tables.find((t) => t.name === 'units')
    units.termId = ' '
    units.termLabel = ''
    form.doi.provider = ''
    const sent = configFromForm(form)
    expect(sent.tables[1].term).toBeUndefined()
    expect(sent.doi).toEqual({ provider: '' })
  })
  it('shows a filter the builder cannot draw as JSON, and sends it unchanged', () => {
    const odd = { _or: [{ code: 5 }] } // not the builder's shape: a bare value
    const form = formFromConfig({ ...CONFIG, tables: [{ name: 'units', kind: 'other', fields: [], filter: odd }] }, cat)
    const units = form.tables.find((t) => t.name === 'units')
    expect(units.filterMode).toBe('json')
    expect(configFromForm(form).tables[0].filter).toEqual(odd)
  })
  it('reads the JSON filter box', () => {
    expect(filterOf({ filterMode: 'json', filterText: '' })).toEqual({ filter: null })
    expect(filterOf({ filterMode: 'json', filterText: '{}' })).toEqual({ filter: null })
    expect(filterOf({ filterMode: 'json', filterText: '[1]' })).toEqual({ error: 'object' })
    expect(filterOf({ filterMode: 'json', filterText: '{"a":' }).error).toBe('json')
    expect(filterOf({ filterMode: 'json', filterText: '{"code":{"_eq":"</script>"}}' })).toEqual({ filter: { code: { _eq: '</script>' } } })
  })
  it('sends the credential only when typed or removed', () => {
    const form = formFromConfig(CONFIG, cat)
    expect(secretOf(form)).toBeUndefined()
    form.doi_secret = 's3cret'
    expect(secretOf(form)).toBe('s3cret')
    form.doi_secret_clear = true
    expect(secretOf(form)).toBe('')
    expect(JSON.stringify(configFromForm(form))).not.toContain('s3cret')
  })
})

describe('formProblems', () => {
  const cat = catalogOf(TABLES, SEARCH)
  it('finds bad ORCID iDs, terms and filters of public tables only', () => {
    const form = formFromConfig(CONFIG, cat)
    expect(formProblems(form)).toEqual({})
    form.authors[1].orcid = '0000-0002-1825-0098'
    const units = form.tables.find((t) => t.name === 'units')
    units.termId = 'http://example.org/300411702'
    const finds = form.tables.find((t) => t.name === 'finds')
    finds.filterMode = 'json'
    finds.filterText = 'not json' // finds is not public: not checked
    form.tables.find((t) => t.name === 'trenches').filterMode = 'json'
    form.tables.find((t) => t.name === 'trenches').filterText = '[]'
    expect(Object.keys(formProblems(form)).sort()).toEqual(['authors.1.orcid', 'tables.trenches.filter', 'tables.units.term'])
    expect(formProblems(form)['authors.1.orcid'].message).toBe('pub.orcid_checksum')
  })
  it('asks for a description, which every version needs', () => {
    const form = formFromConfig({ ...CONFIG, description: '' }, cat)
    expect(formProblems(form)).toEqual({ description: { message: 'pub.description_needed' } })
    form.description = ' \n '
    expect(Object.keys(formProblems(form))).toEqual(['description'])
  })
})

describe('errorTarget', () => {
  const sent = { tables: [{ name: 'trenches', fields: ['code'] }, { name: 'units', fields: ['code', 'description', 'nope'] }] }
  it.each([
    ['tables[1].fields[2]', 'tables.units.fields.nope'],
    ['tables[1].fields[9]', 'tables.units.fields'],
    ['tables[0].filter', 'tables.trenches.filter'],
    ['tables[0].kind', 'tables.trenches.kind'],
    ['tables[1].term', 'tables.units.term'],
    ['tables[1]', 'tables.units'],
    ['tables[7].name', 'tables'],
    ['authors[0].orcid', 'authors.0.orcid'],
    ['authors[3]', 'authors.3'],
    ['authors', 'authors'],
    ['keywords[4]', 'keywords'],
    ['doi.base_url', 'doi.base_url'],
    ['contact', 'contact'],
    [undefined, ''],
  ])('%j → %j', (field, want) => {
    expect(errorTarget(field, sent)).toBe(want)
  })
})
