import { describe, expect, it } from 'vitest'
import { areaPath, bars, cycleText, extent, layers, linePath, peak, phaseOrder, phaseUnits, points, rangeText, rows, runAnswer, scale } from './sequence.js'

const summary = (years, p, extra = {}) => ({ step: 1, density: years.map((year, i) => ({ year, cal_bp: 0, p: p[i] })), ...extra })
const date = (id, phase, mean, s = summary([-500, -499], [0.5, 0.5])) => ({ id, name: id, kind: 'date', phase, likelihood: s, posterior: { ...s, mean_cal_bp: mean } })
const bound = (name, kind, hpd95 = []) => ({ id: name, name, kind, posterior: { hpd95, mean_cal_bp: 0, density: [] } })

describe('extent', () => {
  it.each([
    ['nothing', {}, null],
    ['one date of 1 BCE and 1 CE, one year apart', { dates: [date('a', '', 0, summary([-1, 1], [0.5, 0.5]))] }, [-5, 6]],
    ['a step of 10 years reaches 9 years on', { dates: [date('a', '', 0, summary([-1000, -990], [0.5, 0.5], { step: 10 }))] }, [-1004, -975]],
    ['a boundary by its 95.4% range', { dates: [date('a', '', 0, summary([100, 101], [0.5, 0.5]))], boundaries: [bound('Start A', 'start', [{ from: -300, to: 50, p: 0.954 }])] }, [-307, 109]],
  ])('%s', (_, result, want) => {
    expect(extent(result)).toEqual(want)
  })
})

describe('paths', () => {
  const sx = scale(0, 10, 100, 200)
  const sy = scale(0, 1, 50, 0)
  it('scales linearly, and a zero span to its start', () => {
    expect(sx(5)).toBe(150)
    expect(scale(3, 3, 10, 20)(7)).toBe(10)
  })
  it('draws the points inside the span, a step at its middle', () => {
    const s = summary([1, 2, 3, 40], [0.1, 0.5, 1, 1])
    expect(points(s, sx, sy, [0, 10])).toEqual([[110, 45], [120, 25], [130, 0]])
    expect(points({ step: 5, density: [{ year: 1, p: 0 }] }, sx, sy)).toEqual([[130, 50]])
  })
  it.each([
    ['none', [], '', ''],
    ['one point gets a width', [[10, 5]], 'M10,5', 'M10,40 L10,5 L10.5,5 L10.5,40 Z'],
    ['two', [[10, 5], [20.04, 7.26]], 'M10,5 L20,7.3', 'M10,40 L10,5 L20,7.3 L20,40 Z'],
  ])('%s', (_, pts, line, area) => {
    expect(linePath(pts)).toBe(line)
    expect(areaPath(pts, 40)).toBe(area)
  })
  it('finds the highest probability of several summaries', () => {
    expect(peak(summary([1], [0.2]), undefined, summary([1, 2], [0.1, 0.7]))).toBe(0.7)
    expect(peak()).toBe(0)
  })
  it('draws a range across both its years, BCE to CE without a year 0', () => {
    const b = bars([{ from: -2, to: 1, p: 0.9 }, { from: 5, to: 5, p: 0.05 }], sx)
    expect(b.map((x) => [x.x, x.w])).toEqual([[90, 30], [150, 10]])
    expect(bars([{ from: 5, to: 5 }], scale(0, 1000, 0, 100))[0].w).toBe(1.5)
  })
})

describe('phaseOrder and rows', () => {
  it.each([
    ['contiguous, names with slashes', [bound('Start A/1', 'start'), bound('A/1/B', 'transition'), bound('B/C', 'transition'), bound('End C', 'end')], ['A/1', 'B', 'C']],
    ['sequential', [bound('Start A', 'start'), bound('End A', 'end'), bound('Start B', 'start'), bound('End B', 'end')], ['A', 'B']],
    ['none', [], []],
  ])('%s', (_, bs, want) => {
    expect(phaseOrder(bs)).toEqual(want)
  })

  const kinds = (rs) => rs.map((r) => (r.kind === 'phase' ? `[${r.phase}]` : r.estimate.name))
  it('lists a contiguous model latest at the top, each phase under its boundary, its dates youngest first', () => {
    const res = {
      dates: [date('a1', 'A', 2600), date('b1', 'B', 2400), date('a2', 'A', 2700), date('x', '', 2000)],
      boundaries: [bound('Start A', 'start'), bound('A/B', 'transition'), bound('End B', 'end')],
    }
    expect(kinds(rows(res))).toEqual(['End B', '[B]', 'b1', 'A/B', '[A]', 'a1', 'a2', 'Start A', '[null]', 'x'])
  })
  it('lists a sequential model with each phase between its own boundaries', () => {
    const res = {
      dates: [date('a1', 'A', 2600), date('b1', 'B', 2400)],
      boundaries: [bound('Start A', 'start'), bound('End A', 'end'), bound('Start B', 'start'), bound('End B', 'end')],
    }
    expect(kinds(rows(res))).toEqual(['End B', '[B]', 'b1', 'Start B', 'End A', '[A]', 'a1', 'Start A'])
  })
  it('lists a model without phases as one group', () => {
    expect(kinds(rows({ dates: [date('old', '', 3000), date('young', '', 1000)] }))).toEqual(['[null]', 'young', 'old'])
  })
})

describe('phaseUnits and layers', () => {
  it('places each unit in its layer, latest phase first, units in matrix order', () => {
    const lay = layers([{ id: 1, y: 10 }, { id: 2, y: 84 }, { id: 3, y: 84 }, { id: 4, y: 158 }])
    expect([...lay.entries()]).toEqual([[1, 0], [2, 1], [3, 1], [4, 2]])
    const preview = {
      phases: ['Old', 'New'],
      dates: [
        { record_id: 4, unit_label: 'US 4', name: 'd4', phase: 'Old' },
        { record_id: 2, unit_label: 'US 10', name: 'd2', phase: 'New' },
        { record_id: 1, unit_label: 'US 1', name: 'd1a', phase: 'New' },
        { record_id: 1, unit_label: 'US 1', name: 'd1b', phase: 'New' },
        { record_id: 9, unit_label: 'US 9', name: 'd9', phase: '' },
      ],
    }
    expect(phaseUnits(preview, lay)).toEqual([
      { name: 'New', units: [{ id: 1, label: 'US 1', layer: 0, dates: ['d1a', 'd1b'] }, { id: 2, label: 'US 10', layer: 1, dates: ['d2'] }] },
      { name: 'Old', units: [{ id: 4, label: 'US 4', layer: 2, dates: ['d4'] }] },
      { name: null, units: [{ id: 9, label: 'US 9', layer: undefined, dates: ['d9'] }] },
    ])
  })
})

describe('texts', () => {
  it('writes ranges and a cycle', () => {
    expect(rangeText([{ from: -750, to: -410, p: 0.9 }], (y) => String(y), (p) => p + '')).toBe('-750 – -410 (0.9)')
    expect(cycleText({ code: 'sequence_cycle', body: { path: ['US 1', 'US 2', 'US 1'] } })).toBe('US 1 → US 2 → US 1')
    expect(cycleText({ code: 'other', body: { path: ['x'] } })).toBe('')
  })
})

describe('runAnswer', () => {
  // A client of the jobs route only, answering the job's states in turn.
  const client = (states) => ({ get: async () => states.shift() })
  it('answers an immediate run as it is', async () => {
    expect(await runAnswer(client([]), { run: { id: 1 } })).toEqual({ run: { id: 1 } })
  })
  it('follows the job, reporting progress, to the route’s answer', async () => {
    const seen = []
    const res = await runAnswer(client([{ id: 7, state: 'running', done: 5, total: 10 }, { id: 7, state: 'done', result: { status: 200, body: { run: { id: 2 } } } }]),
      { code: 'job_started', job: { id: 7, state: 'queued' } }, (j) => seen.push(j.state), 0)
    expect(res).toEqual({ run: { id: 2 } })
    expect(seen).toEqual(['queued', 'running', 'done'])
  })
  it('throws the route’s error kept in the job', async () => {
    const err = await runAnswer(client([{ id: 7, state: 'done', result: { status: 503, body: { code: 'sequence_interrupted', message: 'stopped' } } }]),
      { code: 'job_started', job: { id: 7, state: 'running' } }, () => {}, 0).catch((e) => e)
    expect([err.status, err.code]).toEqual([503, 'sequence_interrupted'])
  })
  it('throws a cancelled job', async () => {
    const err = await runAnswer(client([]), { code: 'job_started', job: { id: 7, state: 'cancelled' } }, () => {}, 0).catch((e) => e)
    expect(err.code).toBe('job_cancelled')
  })
})
