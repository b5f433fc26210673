import { describe, expect, it } from 'vitest'
import { geometryText, parseGeometryText, shapeOf } from './geometry.js'

describe('geometry text', () => {
  it.each([
    ['', null],
    ['   ', null],
    ['POINT (12.5 41.9)', 'POINT (12.5 41.9)'],
    ['{"type":"Point","coordinates":[12.5,41.9]}', { type: 'Point', coordinates: [12.5, 41.9] }],
    // Broken JSON goes as text: the server names the problem (invalid_geometry).
    ['{"type":"Point",', '{"type":"Point",'],
  ])('reads %j', (text, want) => { expect(parseGeometryText(text)).toEqual(want) })

  it('shows coordinates to the centimetre and reads back the same', () => {
    const g = { type: 'LineString', coordinates: [[12.492212345678, 41.89], [12.5, 41.900000001]] }
    const s = geometryText(g)
    expect(s).toBe('{"type":"LineString","coordinates":[[12.4922123,41.89],[12.5,41.9]]}')
    expect(parseGeometryText(s).coordinates[0][0]).toBe(12.4922123)
    expect(geometryText(null)).toBe('')
  })

  it.each([['Point', 'point'], ['MultiLineString', 'line'], ['Polygon', 'polygon'], ['GeometryCollection', 'geometrycollection'], [undefined, '']])(
    'names %s as %s', (type, want) => { expect(shapeOf(type ? { type } : null)).toBe(want) })
})
