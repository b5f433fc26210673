// Command example is a Strata plugin for Munsell soil colours, the kind of
// small plugin an institution writes for itself (PLUGINS.md walks through
// it). Activated on a table it adds the column munsell_colour, checks and
// normalises what is saved there ("10yr5/3" becomes "10YR 5/3"), serves
// GET /munsell/parse?q= and the filter operator _munsell_hue.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/pluginsdk"
)

func main() { pluginsdk.Serve(munsell{}) }

// munsell is stateless: every call can run concurrently.
type munsell struct{}

const column = "munsell_colour"

func (munsell) Manifest() pluginsdk.Manifest {
	return pluginsdk.Manifest{
		Name:        "munsell",
		Version:     "1.0.0",
		Description: "Munsell soil colour notation (e.g. 10YR 5/3): a checked column, a parser and a hue filter",
		Features: []pluginsdk.Feature{{
			Name:         "munsell",
			Label:        "Munsell colour",
			Labels:       pluginsdk.Labels{"it": "Colore Munsell"},
			ColumnLabels: map[string]pluginsdk.Labels{column: {"it": "Colore Munsell"}},
			ColumnHelp:   map[string]pluginsdk.Labels{column: {"it": "tinta valore/croma, es. 10YR 5/3; N 5/ per un grigio neutro"}},
			Columns: []pluginsdk.Column{pluginsdk.TextField(column, "Munsell colour").
				WithHelp("hue value/chroma, e.g. 10YR 5/3; N 5/ for a neutral grey")},
			BeforeSave: true,
			SchemaFlag: "has_munsell",
		}},
		Routes: []pluginsdk.Route{{Method: "GET", Path: "/munsell/parse", Access: pluginsdk.AccessRead,
			Handler: http.HandlerFunc(parseRoute)}},
		Operators: []pluginsdk.Operator{{Name: "_munsell_hue", Fields: []string{column}, Feature: "munsell"}},
	}
}

// Colour is a parsed Munsell notation.
type Colour struct {
	Notation string  `json:"notation"`   // normalised: "10YR 5/3", "N 5/"
	Hue      string  `json:"hue"`        // "10YR", or "N" for a neutral
	HueStep  float64 `json:"hue_step"`   // 2.5, 5, 7.5 or 10 (0 for N)
	Family   string  `json:"hue_family"` // R YR Y GY G BG B PB P RP, or N
	Value    float64 `json:"value"`      // lightness, 0 (black) to 10 (white)
	Chroma   float64 `json:"chroma"`     // strength, 0 to 26 (0 for N)
	Neutral  bool    `json:"neutral"`
}

// The ten hue families; two-letter ones first, so "YR" is not read as "Y".
const families = `YR|GY|BG|PB|RP|R|Y|G|B|P`

var (
	notationPattern = regexp.MustCompile(`^(?:(\d+(?:\.\d+)?)\s*(` + families + `)|(N))\s*(\d+(?:\.\d+)?)\s*(?:/\s*(\d+(?:\.\d+)?)?)?$`)
	huePattern      = regexp.MustCompile(`^(?:(\d+(?:\.\d+)?)\s*)?(` + families + `|N)$`)
)

// clean upper-cases, trims, and accepts a decimal comma ("2,5Y").
func clean(s string) string {
	return strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), ",", "."))
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// hueStep checks the number of a hue: soil charts use the four steps.
func hueStep(s string) (float64, error) {
	f, _ := strconv.ParseFloat(s, 64)
	if f != 2.5 && f != 5 && f != 7.5 && f != 10 {
		return 0, fmt.Errorf("hue steps are 2.5, 5, 7.5 and 10, not %s", s)
	}
	return f, nil
}

// Parse reads Munsell notation: "hue value/chroma" (10YR 5/3, 2.5Y 6/4) or
// a neutral "N value/" (N 5/; the legacy N 5/0 is accepted). Spaces and
// case are free; the result is normalised.
func Parse(s string) (Colour, error) {
	m := notationPattern.FindStringSubmatch(clean(s))
	if m == nil {
		return Colour{}, fmt.Errorf("%q is not Munsell notation: hue value/chroma, e.g. 10YR 5/3, or N 5/", s)
	}
	value, _ := strconv.ParseFloat(m[4], 64)
	if value > 10 {
		return Colour{}, fmt.Errorf("value %s is out of range: 0 to 10", m[4])
	}
	chroma, _ := strconv.ParseFloat(m[5], 64) // "" when absent: 0
	if m[3] == "N" {
		if chroma != 0 {
			return Colour{}, fmt.Errorf("a neutral colour (N) has no chroma: N %s/", num(value))
		}
		return Colour{Notation: "N " + num(value) + "/", Hue: "N", Family: "N", Value: value, Neutral: true}, nil
	}
	step, err := hueStep(m[1])
	if err != nil {
		return Colour{}, err
	}
	if m[5] == "" {
		return Colour{}, fmt.Errorf("%q has no chroma: hue value/chroma, e.g. 10YR 5/3", s)
	}
	if chroma > 26 {
		return Colour{}, fmt.Errorf("chroma %s is out of range: 0 to 26", m[5])
	}
	hue := num(step) + m[2]
	return Colour{Notation: hue + " " + num(value) + "/" + num(chroma), Hue: hue, HueStep: step,
		Family: m[2], Value: value, Chroma: chroma}, nil
}

// BeforeSave normalises the colour of every row or reports why it is not
// Munsell notation; a blank colour is stored as null.
func (munsell) BeforeSave(_ context.Context, call pluginsdk.SaveCall) ([]pluginsdk.RowResult, error) {
	out := make([]pluginsdk.RowResult, len(call.Rows))
	for i, row := range call.Rows {
		out[i].Values = row.Values
		v, sent := row.Values[column]
		s, isText := v.(string)
		switch {
		case !sent || v == nil: // not part of this save, or cleared
		case !isText:
			out[i].Errors = []pluginsdk.FieldError{{Field: column, Rule: "type", Message: "a Munsell colour is text, e.g. 10YR 5/3"}}
		case strings.TrimSpace(s) == "":
			row.Values[column] = nil
		default:
			c, err := Parse(s)
			if err != nil {
				out[i].Errors = []pluginsdk.FieldError{{Field: column, Rule: "munsell", Message: err.Error()}}
				continue
			}
			row.Values[column] = c.Notation
		}
	}
	return out, nil
}

// parseRoute serves GET /munsell/parse?q=10YR+5/3.
func parseRoute(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	if strings.TrimSpace(q) == "" {
		pluginsdk.WriteError(w, http.StatusBadRequest, "missing_parameter", "q is required, e.g. ?q=10YR+5/3")
		return
	}
	c, err := Parse(q)
	if err != nil {
		pluginsdk.WriteError(w, http.StatusBadRequest, "invalid_munsell", err.Error())
		return
	}
	pluginsdk.WriteJSON(w, http.StatusOK, struct {
		Status string `json:"status"`
		Colour
	}{"success", c})
}

// ResolveFilter turns {"munsell_colour": {"_munsell_hue": "10YR"}} into a
// prefix filter. Stored values are normalised, so "10Y " (with its space)
// finds 10Y 6/1 but not 10YR 6/1; a family alone ("YR") finds all its
// steps; "N" finds the neutrals.
func (munsell) ResolveFilter(_ context.Context, call pluginsdk.FilterCall) (pluginsdk.FilterResult, error) {
	var operand string
	if err := json.Unmarshal(call.Value, &operand); err != nil {
		return pluginsdk.FilterResult{}, pluginsdk.Errorf("invalid_filter", "%s takes a hue as text, e.g. \"10YR\"", call.Operator)
	}
	m := huePattern.FindStringSubmatch(clean(operand))
	if m == nil {
		return pluginsdk.FilterResult{}, pluginsdk.Errorf("invalid_filter", "%s: %q is not a Munsell hue (e.g. 10YR, YR or N)", call.Operator, operand)
	}
	// The condition is on the colour column, also when the client keyed
	// the operator by the plugin's name ({"munsell": {...}}: call.Field
	// is then "munsell").
	prefix := func(p string) map[string]any {
		return map[string]any{column: map[string]any{"_starts_with": p + " "}}
	}
	switch {
	case m[2] == "N" && m[1] != "":
		return pluginsdk.FilterResult{}, pluginsdk.Errorf("invalid_filter", "%s: the neutral hue is N alone", call.Operator)
	case m[1] != "":
		step, err := hueStep(m[1])
		if err != nil {
			return pluginsdk.FilterResult{}, pluginsdk.Errorf("invalid_filter", "%s: %v", call.Operator, err)
		}
		return pluginsdk.FilterResult{Filter: prefix(num(step) + m[2])}, nil
	case m[2] == "N":
		return pluginsdk.FilterResult{Filter: prefix("N")}, nil
	}
	var alts []any
	for _, step := range []string{"2.5", "5", "7.5", "10"} {
		alts = append(alts, prefix(step+m[2]))
	}
	return pluginsdk.FilterResult{Filter: map[string]any{"_or": alts}}, nil
}
