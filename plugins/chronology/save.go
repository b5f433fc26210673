package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/strata-archaeo/strata/plugins/chronology/chrono"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// Field error rules of the save hook.
const (
	ruleType      = "type"      // not text / not a number where one is needed
	ruleInteger   = "integer"   // a year that is not a whole number
	ruleRange     = "range"     // year 0, or beyond ±chrono.MaxYear
	ruleOrder     = "order"     // chrono_from after chrono_to
	ruleLabel     = "label"     // a label the parser cannot read
	ruleCertainty = "certainty" // not 1–3 or a known word
)

// BeforeSave normalises the chronology columns of each row (the record's
// own columns: this feature has no child table):
//
//   - chrono_label sent without chrono_from and chrono_to fills both from
//     the parsed label (an open end or "?" gives null), so clients may send
//     only "c4l BCE"; a label sent with either bound is kept as free text,
//     since the bounds then say what the label means;
//   - chrono_certainty accepts 1–3 and the legacy words (certa, probabile,
//     possible …) and is stored as the level;
//   - years are whole numbers (numeric text accepted), never 0, and
//     chrono_from ≤ chrono_to — checked against the stored bound (the
//     row's Record) when an update sends only one of them;
//   - blank text is stored as null.
func (p *plugin) BeforeSave(ctx context.Context, call pluginsdk.SaveCall) ([]pluginsdk.RowResult, error) {
	out := make([]pluginsdk.RowResult, len(call.Rows))
	var partial []int // updates sending one bound: checked against the stored other
	for i, row := range call.Rows {
		v := row.Values
		if v == nil {
			v = map[string]any{}
		}
		out[i].Values = v
		out[i].Errors = normaliseRow(v)
		if len(out[i].Errors) == 0 && row.ID != 0 && oneBoundSent(v) {
			partial = append(partial, i)
		}
	}
	checkStoredBounds(call, out, partial)
	return out, nil
}

// normaliseRow rewrites v in place and returns its field errors.
func normaliseRow(v map[string]any) []pluginsdk.FieldError {
	var errs []pluginsdk.FieldError
	fail := func(field, rule, format string, a ...any) {
		errs = append(errs, pluginsdk.FieldError{Field: field, Rule: rule, Message: fmt.Sprintf(format, a...)})
	}

	if raw, sent := v[colLabel]; sent && raw != nil {
		label, ok := text(raw)
		_, fromSent := v[colFrom]
		_, toSent := v[colTo]
		switch {
		case !ok:
			fail(colLabel, ruleType, "a chronology label is text, e.g. c4l BCE or c1 CE/c2 CE")
		case label == "":
			v[colLabel] = nil
		case fromSent || toSent:
			v[colLabel] = label
		default:
			v[colLabel] = label
			d, err := chrono.Parse(label)
			if err != nil {
				fail(colLabel, ruleLabel, "%v; send chrono_from and chrono_to with a free-text label", err)
				break
			}
			v[colFrom], v[colTo] = yearValue(d.From), yearValue(d.To)
		}
	}

	// Years: whole numbers in range. Valid ones are kept for the order check.
	years := map[string]*int{}
	for _, col := range []string{colFrom, colTo} {
		raw, sent := v[col]
		if !sent || raw == nil {
			continue
		}
		if s, isText := raw.(string); isText && strings.TrimSpace(s) == "" {
			v[col] = nil
			continue
		}
		n, ok := pluginsdk.Int(raw)
		if !ok {
			fail(col, ruleInteger, "%s is a year as a whole number, negative BCE (e.g. -250), not %s", col, show(raw))
			continue
		}
		y := int(n)
		var err error
		if col == colFrom {
			err = chrono.Check(&y, nil)
		} else {
			err = chrono.Check(nil, &y)
		}
		if err != nil {
			fail(col, ruleRange, "%v", err)
			continue
		}
		v[col] = int64(y)
		years[col] = &y
	}
	if from, to := years[colFrom], years[colTo]; from != nil && to != nil {
		if err := chrono.Check(from, to); err != nil {
			fail(colFrom, ruleOrder, "%v (%s is after %s)", err, chrono.FormatYear(*from), chrono.FormatYear(*to))
		}
	}

	if raw, sent := v[colCertainty]; sent && raw != nil {
		if level, ok := certainty(raw); ok {
			v[colCertainty] = level
		} else if s, isText := raw.(string); isText && strings.TrimSpace(s) == "" {
			v[colCertainty] = nil
		} else {
			fail(colCertainty, ruleCertainty, "chrono_certainty is 1 (certain), 2 (probable) or 3 (uncertain), not %s", show(raw))
		}
	}

	if raw, sent := v[colPeriod]; sent && raw != nil {
		if s, ok := text(raw); !ok {
			fail(colPeriod, ruleType, "chrono_period is text")
		} else if s == "" {
			v[colPeriod] = nil
		} else {
			v[colPeriod] = s
		}
	}
	return errs
}

// certainty reads a level: 1–3 as a number or text, or a certainty word.
func certainty(raw any) (any, bool) {
	if n, ok := pluginsdk.Int(raw); ok {
		if n >= chrono.Certain && n <= chrono.Uncertain {
			return n, true
		}
		return nil, false
	}
	if s, ok := raw.(string); ok && strings.TrimSpace(s) != "" {
		if level, err := chrono.ParseCertainty(s); err == nil {
			return int64(level), true
		}
	}
	return nil, false
}

// text reads a text column: a string (trimmed) or, from liberal clients, a
// number written as text.
func text(raw any) (string, bool) {
	switch x := raw.(type) {
	case string:
		return strings.TrimSpace(x), true
	case json.Number:
		return string(x), true
	}
	return "", false
}

// yearValue is a bound as written: null for an open one.
func yearValue(y *int) any {
	if y == nil {
		return nil
	}
	return int64(*y)
}

// show quotes a value for a message.
func show(raw any) string {
	b, err := json.Marshal(raw)
	if err != nil {
		return chrono.Clip(fmt.Sprint(raw))
	}
	return chrono.Clip(string(b))
}

// oneBoundSent: an update sends a year for one bound and nothing for the
// other, so from ≤ to can only be checked against what is stored.
func oneBoundSent(v map[string]any) bool {
	from, fromSent := v[colFrom]
	to, toSent := v[colTo]
	return (fromSent && !toSent && from != nil) || (toSent && !fromSent && to != nil)
}

// checkStoredBounds completes the order check of partial updates with the
// other bound as stored: the row's Record, which the server read with the
// record's version and writes this answer only if it still holds (no read
// of our own, which could see another save's row).
func checkStoredBounds(call pluginsdk.SaveCall, out []pluginsdk.RowResult, rows []int) {
	for _, i := range rows {
		s := call.Rows[i].Record
		if s == nil { // an older server: nothing to check against
			continue
		}
		v := out[i].Values
		from, fromOK := boundOf(v, s, colFrom)
		to, toOK := boundOf(v, s, colTo)
		if !fromOK || !toOK {
			continue
		}
		if err := chrono.Check(&from, &to); err != nil {
			field := colFrom
			if _, sent := v[colTo]; sent {
				field = colTo
			}
			out[i].Errors = append(out[i].Errors, pluginsdk.FieldError{Field: field, Rule: ruleOrder,
				Message: fmt.Sprintf("%v: the record is dated %s to %s", err, chrono.FormatYear(from), chrono.FormatYear(to))})
		}
	}
}

// boundOf is a bound after the save: the value sent, else the stored one.
func boundOf(sent, stored map[string]any, col string) (int, bool) {
	raw, ok := sent[col]
	if !ok {
		raw = stored[col]
	}
	n, ok := pluginsdk.Int(raw)
	return int(n), ok
}
