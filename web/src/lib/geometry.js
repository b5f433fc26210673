// Helpers for the geometries the map edits. The server checks every
// geometry (and answers a code naming the problem); these only shape what
// is sent and shown.

// parseGeometryText turns what a user typed into what POST/PUT
// /geoface/feature take: a GeoJSON object when the text is JSON, else the
// text itself (WKT), which the server reads and checks. Empty → null.
export function parseGeometryText(text) {
  const s = String(text ?? '').trim()
  if (!s) return null
  if (s.startsWith('{')) {
    try { return JSON.parse(s) } catch { return s }
  }
  return s
}

// geometryText shows a GeoJSON geometry as compact JSON, coordinates
// rounded to 7 decimals (about 1 cm), for the text box.
export function geometryText(g) {
  if (!g) return ''
  return JSON.stringify(g, (k, v) => (typeof v === 'number' ? Math.round(v * 1e7) / 1e7 : v))
}

// shapeOf names a geometry's kind for people: point, line, polygon, or
// the GeoJSON type for the rest.
export function shapeOf(g) {
  const type = g?.type || ''
  return { Point: 'point', MultiPoint: 'point', LineString: 'line', MultiLineString: 'line', Polygon: 'polygon', MultiPolygon: 'polygon' }[type] || type.toLowerCase()
}
