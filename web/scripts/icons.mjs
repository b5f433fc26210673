// Writes the application's PNG icons (public/icon-192.png, icon-512.png,
// icon-maskable-512.png) from the favicon's design: three light strata on
// brown. Drawn here, with Node's zlib only, so the icons need no image
// tool and the same script gives the same bytes. Run it after changing the
// design: `node scripts/icons.mjs` (the PNGs are committed).
import { deflateSync } from 'node:zlib'
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const BROWN = [0x5b, 0x3a, 0x1e]
const SAND = [0xe8, 0xc8, 0x96]

function crc32(buf) {
  let c, crc = 0xffffffff
  for (let n = 0; n < buf.length; n++) {
    c = (crc ^ buf[n]) & 0xff
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    crc = (crc >>> 8) ^ c
  }
  return (crc ^ 0xffffffff) >>> 0
}
function chunk(type, data) {
  const len = Buffer.alloc(4); len.writeUInt32BE(data.length)
  const td = Buffer.concat([Buffer.from(type), data])
  const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(td))
  return Buffer.concat([len, td, crc])
}

// draw: the icon of size px; maskable fills the whole square (the platform
// cuts its own shape; the strata stay inside the 80% safe zone).
function draw(size, maskable) {
  const s = size / 32
  const radius = maskable ? 0 : 6 * s
  const inset = maskable ? 0.1 * size : 0
  const rows = []
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 4) // filter byte 0, RGBA
    for (let x = 0; x < size; x++) {
      // the rounded square's coverage, antialiased over one pixel
      const cx = Math.min(Math.max(x + 0.5, radius), size - radius)
      const cy = Math.min(Math.max(y + 0.5, radius), size - radius)
      const d = Math.hypot(x + 0.5 - cx, y + 0.5 - cy)
      const alpha = radius ? Math.max(0, Math.min(1, radius - d + 0.5)) : 1
      // strata: lines at 10, 16, 22 of 32 (3 wide) from x 4 to 28, scaled into the safe zone
      const inner = size - 2 * inset
      const u = ((x + 0.5 - inset) / inner) * 32
      const v = ((y + 0.5 - inset) / inner) * 32
      const band = u >= 4 && u <= 28 && [10, 16, 22].some((c) => Math.abs(v - c) <= 1.5)
      const [r, g, b] = band ? SAND : BROWN
      row.set([r, g, b, Math.round(alpha * 255)], 1 + x * 4)
    }
    rows.push(row)
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(size, 0); ihdr.writeUInt32BE(size, 4)
  ihdr[8] = 8; ihdr[9] = 6 // 8-bit RGBA
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 9 })), chunk('IEND', Buffer.alloc(0))])
}

const out = (name) => fileURLToPath(new URL('../public/' + name, import.meta.url))
writeFileSync(out('icon-192.png'), draw(192, false))
writeFileSync(out('icon-512.png'), draw(512, false))
writeFileSync(out('icon-maskable-512.png'), draw(512, true))
