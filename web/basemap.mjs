// The offline base map (issue 30): Natural Earth's 1:50m land and country
// borders (public domain), from the npm package world-atlas (ISC, a
// TopoJSON of Natural Earth), converted at build time to one small GeoJSON
// file of the build: the land as polygons, the borders between countries
// as lines drawn once each. The arcs are simplified (topojson-simplify,
// ISC: Visvalingam, the most significant fifth of the points kept, so the
// coasts stay finer than the whole 1:110m set), coordinates rounded
// to 0.01° (about 1 km) and points that fall together dropped: about 250 KB,
// 87 KB gzip, 59 KB brotli, fetched only when a map opens.
// The web app fetches it from the server itself, never from another host.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { feature, mesh } from 'topojson-client'
import { presimplify, quantile, simplify } from 'topojson-simplify'

const require = createRequire(import.meta.url)

const round = (v) => Math.round(v * 100) / 100

// line rounds a list of positions and drops repeats.
function line(coords) {
  const out = []
  for (const [x, y] of coords) {
    const p = [round(x), round(y)]
    const last = out[out.length - 1]
    if (!last || last[0] !== p[0] || last[1] !== p[1]) out.push(p)
  }
  return out
}

// polygons keeps the rings that still enclose something after rounding.
function polygons(geometry) {
  const polys = geometry.type === 'Polygon' ? [geometry.coordinates] : geometry.coordinates
  const out = []
  for (const poly of polys) {
    const [outer, ...holes] = poly.map(line)
    if (outer.length >= 4) out.push([outer, ...holes.filter((r) => r.length >= 4)])
  }
  return { type: 'MultiPolygon', coordinates: out }
}

export function basemapGeoJSON() {
  const pre = presimplify(JSON.parse(readFileSync(require.resolve('world-atlas/countries-50m.json'), 'utf8')))
  const topo = simplify(pre, quantile(pre, 0.2))
  const land = feature(topo, topo.objects.land)
  const landGeom = land.type === 'FeatureCollection'
    ? { type: 'MultiPolygon', coordinates: land.features.flatMap((f) => polygons(f.geometry).coordinates) }
    : polygons(land.geometry)
  const borders = mesh(topo, topo.objects.countries, (a, b) => a !== b)
  const lines = borders.coordinates.map(line).filter((l) => l.length >= 2)
  return {
    type: 'FeatureCollection',
    features: [
      { type: 'Feature', properties: { kind: 'land' }, geometry: landGeom },
      { type: 'Feature', properties: { kind: 'borders' }, geometry: { type: 'MultiLineString', coordinates: lines } },
    ],
  }
}

// basemap is the Vite plugin: `import url from 'virtual:strata-basemap'`
// gives the URL of the file, emitted as a hashed asset of the build (and
// precompressed with the others).
export function basemap() {
  const id = 'virtual:strata-basemap'
  let serve = false
  return {
    name: 'strata-basemap',
    configResolved(cfg) { serve = cfg.command === 'serve' },
    resolveId(s) { return s === id ? '\0' + id : null },
    load(s) {
      if (s !== '\0' + id) return null
      const json = JSON.stringify(basemapGeoJSON())
      if (serve) return `export default ${JSON.stringify('data:application/json,' + encodeURIComponent(json))}`
      const ref = this.emitFile({ type: 'asset', name: 'basemap.json', source: json })
      return `export default import.meta.ROLLUP_FILE_URL_${ref}`
    },
  }
}
