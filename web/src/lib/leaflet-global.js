// Leaflet-Geoman is built as a script that extends the global `L`; this
// module puts Leaflet there before it is imported (ES modules run in the
// order they are imported). Both load only with the map screen.
import L from 'leaflet'

globalThis.L = L
export default L
