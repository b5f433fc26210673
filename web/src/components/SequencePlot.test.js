import { describe, expect, it, vi } from 'vitest'
import { mount } from '@vue/test-utils'
import axe from 'axe-core'
import SequencePlot from './SequencePlot.vue'

vi.setConfig({ testTimeout: 60000 })

// A date of two years' posterior over a three-year likelihood, and a
// boundary without one, on the span [-10, 10] (pos scale).
const date = {
  id: '1', name: 'OxA-1', kind: 'date', agreement: 95,
  likelihood: { step: 1, hpd95: [{ from: -3, to: 1, p: 0.95 }], density: [{ year: -3, p: 0.2 }, { year: -2, p: 0.3 }, { year: 1, p: 0.2 }] },
  posterior: { step: 1, hpd68: [{ from: -2, to: -2, p: 0.7 }], hpd95: [{ from: -3, to: -2, p: 0.96 }], density: [{ year: -3, p: 0.4 }, { year: -2, p: 0.6 }] },
}
const boundary = { id: 'Start A', name: 'Start A', kind: 'start', posterior: { step: 1, hpd68: [], hpd95: [{ from: -9, to: -4, p: 0.95 }], density: [{ year: -9, p: 0.1 }, { year: -4, p: 0.3 }, { year: 40, p: 0.2 }] } }

describe('SequencePlot', () => {
  it.each([
    ['a date: posterior filled, likelihood outlined, ranges as bars', date, { posterior: 1, likelihood: 1, hpd95: 1, hpd68: 1 }],
    ['a boundary: its posterior only, the tail outside the span left out', boundary, { posterior: 1, likelihood: 0, hpd95: 1, hpd68: 0 }],
  ])('%s', async (_, estimate, want) => {
    const w = mount(SequencePlot, { props: { estimate, ext: [-10, 10], ticks: [-5, 0, 5], label: estimate.name + ': the label' }, attachTo: document.body })
    const svg = w.get('[data-test=seq-plot]')
    expect([svg.attributes('role'), svg.attributes('aria-label')]).toEqual(['img', estimate.name + ': the label'])
    const got = Object.fromEntries(Object.keys(want).map((k) => [k, w.findAll(`[data-test=seq-${k}]`).length]))
    expect(got).toEqual(want)
    // Every point drawn lies inside the plot (a boundary's tail at 40 is cut).
    const xs = [...w.get('[data-test=seq-posterior]').attributes('d').matchAll(/[ML]([\d.]+),/g)].map((m) => Number(m[1]))
    expect(xs.every((x) => x >= 8 && x <= 552)).toBe(true)
    const res = await axe.run(w.element, { resultTypes: ['violations'] })
    expect(res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([])
    w.unmount()
  })
})
