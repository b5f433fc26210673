package publish

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/strata-archaeo/strata/core/matrix"
	"github.com/strata-archaeo/strata/core/schema"
)

// Figures of a table with stratigraphic relations, as SVG:
//
//	figures/<tb>-matrix.svg  its Harris matrix: the published units in
//	                         layers, each below everything above it, with
//	                         the relations of the transitive reduction
//	figures/<tb>-dates.svg   its radiocarbon dates' 2σ calibrated ranges
//
// They are drawn from the same rows as the documents (the public gate's),
// so a figure shows nothing the tables do not.

// maxFigureUnits bounds the matrix drawn: beyond it a figure is no
// longer readable (and its layout costs more than the rest).
const maxFigureUnits = 2000

// maxFigureDates bounds the dates drawn.
const maxFigureDates = 2000

// svgText escapes s for SVG text and attributes.
func svgText(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// matrixFigure writes t's Harris matrix, false when there is nothing to
// draw (no relation, too many units, a cycle).
func (b *build) matrixFigure(t *schema.Table, tr *tableRelations) error {
	if tr == nil || len(tr.all) == 0 || len(tr.labels) > maxFigureUnits {
		return nil
	}
	g := matrix.New()
	ids := make([]int64, 0, len(tr.labels))
	for id := range tr.labels {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		g.Add(id)
	}
	for _, r := range tr.all {
		g.Relate(r.First, r.Relation, r.Second)
	}
	redundant, ok := g.Redundant()
	if !ok {
		return nil // a cycle: the check reports it; no matrix can be drawn
	}
	drop := map[matrix.Edge]bool{}
	for _, e := range redundant {
		drop[e] = true
	}
	c := g.Condense()
	// Layers: each node one below the lowest of the nodes above it.
	layer := make([]int, len(c.Units))
	depth := 0
	for _, n := range c.Top {
		for _, up := range c.Above[n] {
			layer[n] = max(layer[n], layer[up]+1)
		}
		depth = max(depth, layer[n]+1)
	}
	rows := make([][]int, depth)
	for _, n := range c.Top {
		rows[layer[n]] = append(rows[layer[n]], n)
	}
	// Within a layer, nodes follow the mean position of those above
	// them (one pass, top down), ties by their first unit's id.
	pos := make([]float64, len(c.Units))
	for l, row := range rows {
		key := make(map[int]float64, len(row))
		for _, n := range row {
			if l == 0 || len(c.Above[n]) == 0 {
				key[n] = float64(c.Units[n][0])
				continue
			}
			sum := 0.0
			for _, up := range c.Above[n] {
				sum += pos[up]
			}
			key[n] = sum / float64(len(c.Above[n]))
		}
		slices.SortStableFunc(row, func(a, b int) int {
			if key[a] != key[b] {
				if key[a] < key[b] {
					return -1
				}
				return 1
			}
			return int(c.Units[a][0] - c.Units[b][0])
		})
		for i, n := range row {
			pos[n] = float64(i)
		}
	}
	const boxW, boxH, gapX, gapY = 120, 28, 20, 36
	width := 0
	for _, row := range rows {
		width = max(width, len(row))
	}
	xy := func(n int) (float64, float64) {
		return float64(int(pos[n])*(boxW+gapX) + gapX), float64(layer[n]*(boxH+gapY) + gapY)
	}
	label := func(n int) string {
		var parts []string
		for _, u := range c.Units[n] {
			parts = append(parts, tr.labels[u])
		}
		slices.Sort(parts)
		s := parts[0]
		for _, p := range parts[1:] {
			s += " = " + p
		}
		return s
	}
	return b.add(crateFile{Path: "figures/" + t.Name + "-matrix.svg", Name: t.Label + ": Harris matrix",
		Description: "The published units in stratigraphic order (the transitive reduction of their relations); units that are the same are one box.",
		Format:      "image/svg+xml"}, func(w io.Writer) error {
		var buf bytes.Buffer
		W, H := width*(boxW+gapX)+gapX, depth*(boxH+gapY)+gapY
		fmt.Fprintf(&buf, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", W, H, W, H)
		fmt.Fprintf(&buf, "<title>%s</title>\n", svgText(t.Label+": Harris matrix"))
		for _, n := range c.Top {
			x, y := xy(n)
			for _, lo := range c.Below[n] {
				if drop[matrix.Edge{Upper: c.Units[n][0], Lower: c.Units[lo][0]}] && len(c.Units[n]) == 1 && len(c.Units[lo]) == 1 {
					continue
				}
				x2, y2 := xy(lo)
				fmt.Fprintf(&buf, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#444"/>`+"\n", x+boxW/2, y+boxH, x2+boxW/2, y2)
			}
		}
		for _, n := range c.Top {
			x, y := xy(n)
			fmt.Fprintf(&buf, `<rect x="%g" y="%g" width="%d" height="%d" fill="#fff" stroke="#222"/><text x="%g" y="%g" text-anchor="middle">%s</text>`+"\n",
				x, y, boxW, boxH, x+boxW/2, y+boxH/2+4, svgText(label(n)))
		}
		buf.WriteString("</svg>\n")
		_, err := w.Write(buf.Bytes())
		return err
	})
}

// datesFigure writes t's radiocarbon dates as 2σ ranges on one calendar
// axis, oldest at the top.
func (b *build) datesFigure(t *schema.Table, tr *tableRelations) error {
	if tr == nil {
		return nil
	}
	type bar struct {
		label    string
		from, to int // astronomical years
	}
	var bars []bar
	for unit, ds := range tr.dates {
		for _, d := range ds {
			for _, r := range d.Calibrated {
				bars = append(bars, bar{label: tr.labels[unit] + " " + d.LabCode, from: r.From, to: r.To})
			}
		}
	}
	if len(bars) == 0 || len(bars) > maxFigureDates {
		return nil
	}
	slices.SortFunc(bars, func(a, b bar) int {
		if a.from != b.from {
			return a.from - b.from
		}
		if a.to != b.to {
			return a.to - b.to
		}
		if a.label < b.label {
			return -1
		}
		if a.label > b.label {
			return 1
		}
		return 0
	})
	lo, hi := bars[0].from, bars[0].to
	for _, x := range bars {
		lo, hi = min(lo, x.from), max(hi, x.to)
	}
	span := float64(max(hi-lo, 1))
	const left, plot, rowH = 220, 600, 16
	year := func(y int) string {
		if y <= 0 {
			return strconv.Itoa(1-y) + " BCE"
		}
		return strconv.Itoa(y) + " CE"
	}
	return b.add(crateFile{Path: "figures/" + t.Name + "-dates.svg", Name: t.Label + ": radiocarbon dates",
		Description: "The 2σ (95.4%) calibrated ranges of the published units' radiocarbon dates, oldest first.",
		Format:      "image/svg+xml"}, func(w io.Writer) error {
		var buf bytes.Buffer
		W, H := left+plot+20, (len(bars)+2)*rowH+20
		fmt.Fprintf(&buf, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", W, H, W, H)
		fmt.Fprintf(&buf, "<title>%s</title>\n", svgText(t.Label+": radiocarbon dates, 2σ calibrated ranges"))
		for i, x := range bars {
			y := float64((i+1)*rowH + 10)
			x1 := left + float64(x.from-lo)/span*plot
			x2 := left + float64(x.to-lo)/span*plot
			fmt.Fprintf(&buf, `<text x="%d" y="%g" text-anchor="end">%s</text><rect x="%g" y="%g" width="%g" height="%d" fill="#4a6fa5"><title>%s</title></rect>`+"\n",
				left-6, y+4, svgText(x.label), x1, y-5, max(x2-x1, 1), rowH-6, svgText(year(x.from)+" – "+year(x.to)))
		}
		axis := float64((len(bars)+1)*rowH + 14)
		fmt.Fprintf(&buf, `<line x1="%d" y1="%g" x2="%d" y2="%g" stroke="#222"/><text x="%d" y="%g">%s</text><text x="%d" y="%g" text-anchor="end">%s</text>`+"\n",
			left, axis, left+plot, axis, left, axis+14, year(lo), left+plot, axis+14, year(hi))
		buf.WriteString("</svg>\n")
		_, err := w.Write(buf.Bytes())
		return err
	})
}
