package demo

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
)

// imageKind is what a demo image shows.
type imageKind int

const (
	imagePlan    imageKind = iota // a site plan: walls on a grid
	imageSection                  // a section drawing: layers of soil
	imageBurial                   // a burial: an outline in its cut
)

// demoImage draws a small image (240×160 PNG, a few KB) of kind, the same
// for the same seed: records get pictures without shipping any.
func demoImage(kind imageKind, seed uint64) ([]byte, error) {
	const w, h = 240, 160
	rng := rand.New(rand.NewPCG(seed, uint64(kind)))
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{
		color.RGBA{0xf4, 0xee, 0xe0, 0xff}, // paper
		color.RGBA{0x8a, 0x6a, 0x4a, 0xff}, // brown earth
		color.RGBA{0xb8, 0x96, 0x6a, 0xff}, // sand
		color.RGBA{0x5c, 0x4a, 0x3a, 0xff}, // dark fill
		color.RGBA{0x9a, 0x9a, 0x92, 0xff}, // stone
		color.RGBA{0x33, 0x33, 0x33, 0xff}, // ink
		color.RGBA{0xe8, 0xe0, 0xc8, 0xff}, // bone
	})
	const paper, earth, sand, fill, stone, ink, bone = 0, 1, 2, 3, 4, 5, 6
	set := func(x, y int, c uint8) {
		if x >= 0 && x < w && y >= 0 && y < h {
			img.SetColorIndex(x, y, c)
		}
	}
	rect := func(x0, y0, x1, y1 int, c uint8) {
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				set(x, y, c)
			}
		}
	}
	switch kind {
	case imagePlan:
		for x := 0; x < w; x += 20 { // the grid
			rect(x, 0, x+1, h, stone)
		}
		for y := 0; y < h; y += 20 {
			rect(0, y, w, y+1, stone)
		}
		for i := 0; i < 5; i++ { // walls
			x, y := 20+rng.IntN(w-80), 20+rng.IntN(h-60)
			if i%2 == 0 {
				rect(x, y, x+40+rng.IntN(40), y+6, fill)
			} else {
				rect(x, y, x+6, y+30+rng.IntN(30), fill)
			}
		}
	case imageSection:
		top := 0
		layers := []uint8{earth, sand, fill, earth, sand, fill}
		for i, c := range layers {
			depth := top + 18 + rng.IntN(16)
			phase := rng.Float64() * 6
			for x := 0; x < w; x++ {
				y0 := top + int(3*math.Sin(float64(x)/17+phase))
				y1 := depth + int(3*math.Sin(float64(x)/23+phase))
				if i == len(layers)-1 {
					y1 = h
				}
				for y := y0; y < y1; y++ {
					set(x, y, c)
				}
				set(x, y1, ink)
			}
			top = depth
		}
	case imageBurial:
		rect(0, 0, w, h, earth)
		rect(30, 40, 210, 120, fill) // the cut
		cx, cy := 60, 80
		for y := -12; y <= 12; y++ { // the skull
			for x := -12; x <= 12; x++ {
				if x*x+y*y <= 144 {
					set(cx+x, cy+y, bone)
				}
			}
		}
		rect(72, 77, 170, 83, bone) // the spine
		rect(80, 66, 130, 70, bone) // the arms
		rect(80, 90, 130, 94, bone)
		rect(170, 70, 200, 74, bone) // the legs
		rect(170, 86, 200, 90, bone)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
