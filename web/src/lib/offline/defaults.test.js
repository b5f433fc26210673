// The application's default offline tables on the device (defaults.js),
// over a real IndexedDB implementation (fake-indexeddb).
import 'fake-indexeddb/auto'
import { beforeEach, describe, expect, it } from 'vitest'
import { saveSession } from '../api.js'
import { applyDefaults, planDefaults, removedDefaults, restoreDefault } from './defaults.js'
import { mark, marks, unmark } from './store.js'

describe('planDefaults', () => {
  const f = { label: { _eq: 'F1' } }
  it.each([
    ['marks a default not kept', [{ table: 'finds', filter: f }], [], [], { put: [{ tb: 'finds', filter: f }], drop: [] }],
    ['leaves a default kept with its filter', [{ table: 'finds', filter: f }], [{ tb: 'finds', filter: f, by_admin: true }], [], { put: [], drop: [] }],
    ['follows a changed default filter', [{ table: 'finds' }], [{ tb: 'finds', filter: f, by_admin: true }], [], { put: [{ tb: 'finds', filter: null }], drop: [] }],
    ['skips a default the user removed', [{ table: 'finds' }], [], ['finds'], { put: [], drop: [] }],
    ['leaves the user\'s own mark', [{ table: 'finds' }], [{ tb: 'finds', filter: f, by_admin: false }], [], { put: [], drop: [] }],
    ['drops a default no longer set', [], [{ tb: 'finds', filter: null, by_admin: true }, { tb: 'units', filter: null }], [], { put: [], drop: ['finds'] }],
  ])('%s', (_, defaults, current, removed, want) => {
    expect(planDefaults(defaults, current, removed)).toEqual(want)
  })
})

let n = 0
let app
beforeEach(() => {
  app = `defaults${++n}`
  saveSession(app, { token: 't', expires_at: null, user: { id: 9 } })
})
const kept = async () => Object.fromEntries((await marks(app)).map((m) => [m.tb, { filter: m.filter, by_admin: m.by_admin }]))

describe('applyDefaults', () => {
  it('keeps the defaults, remembers a removal on this device, and takes it back on demand', async () => {
    const f = { code: { _eq: 'US 1' } }
    await applyDefaults(app, [{ table: 'units', filter: f }, { table: 'finds' }])
    expect(await kept()).toEqual({ units: { filter: f, by_admin: true }, finds: { filter: null, by_admin: true } })

    await unmark(app, 'finds') // the user removes a default
    expect(await removedDefaults(app)).toEqual(['finds'])
    await applyDefaults(app, [{ table: 'units', filter: f }, { table: 'finds' }])
    expect(Object.keys(await kept())).toEqual(['units'])

    await restoreDefault(app, 'finds')
    expect(await removedDefaults(app)).toEqual([])
    expect((await kept()).finds).toEqual({ filter: null, by_admin: true })

    await applyDefaults(app, [{ table: 'finds' }]) // the admin dropped units
    expect(Object.keys(await kept())).toEqual(['finds'])
  })

  it('leaves a table the user marks with their own filter', async () => {
    const mine = { code: { _like: 'US%' } }
    await mark(app, 'units', mine)
    await applyDefaults(app, [{ table: 'units' }])
    expect((await kept()).units).toEqual({ filter: mine, by_admin: false })
    await applyDefaults(app, [])
    expect((await kept()).units).toEqual({ filter: mine, by_admin: false })
  })
})
