package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/strata-archaeo/strata/plugins/radiocarbon/calib"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// dating is what a row's calibration needs, after the save.
type dating struct {
	bp, bpError any // int64 or nil
	curve       string
}

// BeforeSave checks the radiocarbon rows of a save and computes their
// calibrated ranges:
//
//   - text columns are trimmed (blank is null), bp and bp_error are whole
//     numbers, d13c a number, curve one of the known curves (intcal20 when
//     empty or, on a new row, not sent);
//   - a row whose bp, bp_error or curve changes (every new row) gets all
//     four cal_* columns, from calib: null while bp is null (a sample not
//     yet dated); what the client sent for them is dropped. An update that
//     sends only some of the three takes the others from the stored row
//     (the row's Record); one that changes none leaves cal_* alone;
//   - bp without bp_error, bp_error ≤ 0, an age outside the curve or a
//     curve that is not loaded is a field error on that row's column, and
//     the save writes nothing.
func (p *plugin) BeforeSave(ctx context.Context, call pluginsdk.SaveCall) ([]pluginsdk.RowResult, error) {
	out := make([]pluginsdk.RowResult, len(call.Rows))
	dates := make([]*dating, len(call.Rows)) // nil: cal_* stay as stored
	var partial []int                        // updates needing stored values
	for i, row := range call.Rows {
		v := row.Values
		if v == nil {
			v = map[string]any{}
		}
		for _, c := range computed {
			delete(v, c)
		}
		out[i].Values = v
		out[i].Errors = normaliseRow(v, row.ID == 0, p.curveNames())
		_, bpSent := v[colBP]
		_, errSent := v[colErr]
		_, curveSent := v[colCurve]
		if len(out[i].Errors) > 0 || (row.ID != 0 && !bpSent && !errSent && !curveSent) {
			continue
		}
		dates[i] = &dating{bp: v[colBP], bpError: v[colErr], curve: curveOf(v[colCurve])}
		if row.ID != 0 && (!bpSent || !errSent || !curveSent) {
			partial = append(partial, i)
		}
	}
	completeFromStored(call, dates, partial)
	for i, d := range dates {
		if d != nil {
			out[i].Errors = append(out[i].Errors, p.calibrateRow(out[i].Values, d)...)
		}
	}
	return out, nil
}

// normaliseRow checks and normalises the sent columns in place; curves are
// the curve names a row may use.
func normaliseRow(v map[string]any, isNew bool, curves []string) []pluginsdk.FieldError {
	var errs []pluginsdk.FieldError
	fail := func(field, rule, format string, a ...any) {
		errs = append(errs, pluginsdk.FieldError{Field: field, Rule: rule, Message: fmt.Sprintf(format, a...)})
	}
	for _, col := range []string{colLab, colMat, colNotes} {
		raw, sent := v[col]
		if !sent || raw == nil {
			continue
		}
		switch x := raw.(type) {
		case string:
			v[col] = blankNil(strings.TrimSpace(x))
		case json.Number: // a lab code sent as a number
			v[col] = string(x)
		default:
			fail(col, "type", "%s is text", col)
		}
	}
	for _, col := range []string{colBP, colErr} {
		raw, sent := v[col]
		if !sent || raw == nil || isBlank(raw) {
			if sent {
				v[col] = nil
			}
			continue
		}
		n, ok := pluginsdk.Int(raw)
		if !ok {
			fail(col, "integer", "%s is a whole number of years, not %s", col, show(raw))
			continue
		}
		v[col] = n
	}
	if raw, sent := v[colD13C]; sent && raw != nil {
		if isBlank(raw) {
			v[colD13C] = nil
		} else if f, ok := pluginsdk.Float(raw); ok {
			v[colD13C] = f
		} else {
			fail(colD13C, "number", "d13c is a number (‰), not %s", show(raw))
		}
	}
	raw, sent := v[colCurve]
	switch s, isText := raw.(string); {
	case !sent && !isNew: // unchanged
	case raw == nil || (isText && strings.TrimSpace(s) == ""):
		v[colCurve] = calib.DefaultCurve
	case !isText:
		fail(colCurve, "type", "curve is the name of a curve: %s", strings.Join(curves, ", "))
	case !slices.Contains(curves, curveOf(s)):
		fail(colCurve, "unknown_curve", "unknown calibration curve %q: use %s", s, strings.Join(curves, ", "))
	default:
		v[colCurve] = curveOf(s)
	}
	return errs
}

// completeFromStored fills what partial updates did not send from the
// stored row: the row's Record, which the server read with the record's
// version and writes this answer only if it still holds (a read of our
// own could see another save's row, and the ranges would not match the
// stored inputs).
func completeFromStored(call pluginsdk.SaveCall, dates []*dating, rows []int) {
	for _, i := range rows {
		s, sent := call.Rows[i].Record, call.Rows[i].Values
		if s == nil { // an older server: what was sent is all there is
			continue
		}
		if _, ok := sent[colBP]; !ok {
			dates[i].bp = intOrNil(s[colBP])
		}
		if _, ok := sent[colErr]; !ok {
			dates[i].bpError = intOrNil(s[colErr])
		}
		if _, ok := sent[colCurve]; !ok {
			c, _ := s[colCurve].(string)
			dates[i].curve = curveOf(c)
		}
	}
}

// calibrateRow sets the four cal_* columns of one row, or explains why it
// cannot.
func (p *plugin) calibrateRow(v map[string]any, d *dating) []pluginsdk.FieldError {
	for _, c := range computed {
		v[c] = nil
	}
	if d.bp == nil {
		return nil // no age yet: nothing to calibrate
	}
	if d.bpError == nil {
		return []pluginsdk.FieldError{{Field: colErr, Rule: "required", Message: "bp_error is required with bp"}}
	}
	bp, _ := pluginsdk.Float(d.bp)
	bpError, _ := pluginsdk.Float(d.bpError)
	r, err := p.calibrate(d.curve, bp, bpError)
	if err != nil {
		field := calib.FieldOf(err)
		if field == "" {
			field = colBP
		}
		return []pluginsdk.FieldError{{Field: field, Rule: ruleOf(err), Message: err.Error()}}
	}
	v[cal1From], v[cal1To] = r.Sigma1.From, r.Sigma1.To
	v[cal2From], v[cal2To] = r.Sigma2.From, r.Sigma2.To
	return nil
}

// curveOf is a curve's canonical name; empty is the default curve.
func curveOf(raw any) string {
	s, _ := raw.(string)
	if s = strings.ToLower(strings.TrimSpace(s)); s == "" {
		return calib.DefaultCurve
	}
	return s
}

func intOrNil(v any) any {
	if n, ok := pluginsdk.Int(v); ok {
		return n
	}
	return nil
}

func isBlank(v any) bool {
	s, ok := v.(string)
	return ok && strings.TrimSpace(s) == ""
}

func blankNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func show(raw any) string {
	b, err := json.Marshal(raw)
	if err != nil {
		return fmt.Sprint(raw)
	}
	return string(b)
}
