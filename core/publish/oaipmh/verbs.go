package oaipmh

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"time"
)

// writeIdentify answers Identify from the Identity ServeHTTP already holds
// (the envelope needs its base URL too).
func writeIdentify(e *errWriter, id Identity) {
	del := id.DeletedRecord
	if del == "" {
		del = DeletedNo
	}
	e.s("<Identify>")
	e.elem("repositoryName", id.RepositoryName)
	e.elem("baseURL", id.BaseURL)
	e.elem("protocolVersion", "2.0")
	for _, m := range id.AdminEmails {
		e.elem("adminEmail", m)
	}
	e.elem("earliestDatestamp", stamp(id.EarliestDatestamp))
	e.elem("deletedRecord", del)
	e.elem("granularity", "YYYY-MM-DDThh:mm:ssZ")
	e.s("</Identify>\n")
}

func (h *handler) listMetadataFormats(ctx context.Context, rep *reply, args map[string]string) error {
	formats := h.repo.Formats()
	if ident, ok := args["identifier"]; ok {
		rep.attrs["identifier"] = ident
		it, found, err := h.repo.Get(ctx, ident)
		if err != nil {
			return fmt.Errorf("oaipmh: get %q: %w", ident, err)
		}
		if !found {
			rep.fail(errIDDoesNotExist, "No item has this identifier.")
			return nil
		}
		var own []Format
		for _, f := range formats {
			if it.has(f.Prefix) {
				own = append(own, f)
			}
		}
		formats = own
	}
	if len(formats) == 0 {
		rep.fail(errNoMetadataFormats, "No metadata formats are available.")
		return nil
	}
	e := &errWriter{w: &rep.body}
	e.s("<ListMetadataFormats>")
	for _, f := range formats {
		if !ValidPrefix(f.Prefix) {
			return fmt.Errorf("oaipmh: invalid metadata prefix %q", f.Prefix)
		}
		e.s("<metadataFormat>")
		e.elem("metadataPrefix", f.Prefix)
		e.elem("schema", f.Schema)
		e.elem("metadataNamespace", f.Namespace)
		e.s("</metadataFormat>")
	}
	e.s("</ListMetadataFormats>\n")
	return e.err
}

func (h *handler) listSets(ctx context.Context, rep *reply, args map[string]string) error {
	if _, ok := args["resumptionToken"]; ok {
		// ListSets fits in one response, so no token was ever issued.
		rep.fail(errBadResumptionToken, "This repository issues no resumption tokens for ListSets.")
		return nil
	}
	sets, err := h.repo.Sets(ctx)
	if err != nil {
		return fmt.Errorf("oaipmh: sets: %w", err)
	}
	if len(sets) == 0 {
		rep.fail(errNoSetHierarchy, "This repository does not support sets.")
		return nil
	}
	e := &errWriter{w: &rep.body}
	e.s("<ListSets>")
	for _, s := range sets {
		if !ValidSetSpec(s.Spec) {
			return fmt.Errorf("oaipmh: invalid set spec %q", s.Spec)
		}
		e.s("<set>")
		e.elem("setSpec", s.Spec)
		e.elem("setName", s.Name)
		if s.Description != "" {
			e.s("<setDescription>")
			if err := WriteDC(e.w, DC{Description: []string{s.Description}}); err != nil {
				return err
			}
			e.s("</setDescription>")
		}
		e.s("</set>")
	}
	e.s("</ListSets>\n")
	return e.err
}

// checkPrefix answers whether the repository has the format, failing rep
// (badArgument for an impossible prefix, cannotDisseminateFormat for an
// unknown one) when not.
func (h *handler) checkPrefix(rep *reply, prefix string) bool {
	if !ValidPrefix(prefix) {
		rep.fail(errBadArgument, "metadataPrefix is not a valid prefix.")
		return false
	}
	rep.attrs["metadataPrefix"] = prefix
	for _, f := range h.repo.Formats() {
		if f.Prefix == prefix {
			return true
		}
	}
	rep.fail(errCannotDisseminateFormat, "This repository does not disseminate this metadata format.")
	return false
}

func (h *handler) getRecord(ctx context.Context, rep *reply, args map[string]string) error {
	ident := args["identifier"]
	rep.attrs["identifier"] = ident
	if !h.checkPrefix(rep, args["metadataPrefix"]) {
		return nil
	}
	it, found, err := h.repo.Get(ctx, ident)
	if err != nil {
		return fmt.Errorf("oaipmh: get %q: %w", ident, err)
	}
	if !found {
		rep.fail(errIDDoesNotExist, "No item has this identifier.")
		return nil
	}
	if !it.has(args["metadataPrefix"]) {
		rep.fail(errCannotDisseminateFormat, "This item is not available in this metadata format.")
		return nil
	}
	e := &errWriter{w: &rep.body}
	e.s("<GetRecord>")
	if err := writeRecord(e, it, args["metadataPrefix"]); err != nil {
		return err
	}
	e.s("</GetRecord>\n")
	return e.err
}

// list answers ListIdentifiers and ListRecords.
func (h *handler) list(ctx context.Context, rep *reply, verb string, args map[string]string) error {
	var t token
	fromToken := false
	if s, ok := args["resumptionToken"]; ok {
		var err error
		t, err = decodeToken(h.opt.TokenKey, s)
		if err != nil || t.Verb != verb {
			rep.fail(errBadResumptionToken, "The resumption token is invalid.")
			return nil
		}
		fromToken = true
	} else {
		t = token{Verb: verb, Prefix: args["metadataPrefix"], Set: args["set"], From: args["from"], Until: args["until"]}
	}
	// The same checks whether the arguments came from the harvester or
	// from a token: a token is signed, but the repository may have changed
	// (a format or the set hierarchy withdrawn) since it was issued.
	from, until, ok := parseRange(t.From, t.Until)
	if !ok {
		if fromToken {
			rep.fail(errBadResumptionToken, "The resumption token is invalid.")
		} else {
			rep.fail(errBadArgument, "from and until must be dates (YYYY-MM-DD) or times (YYYY-MM-DDThh:mm:ssZ) of the same granularity, from not after until.")
		}
		return nil
	}
	if !fromToken {
		if t.From != "" {
			rep.attrs["from"] = t.From
		}
		if t.Until != "" {
			rep.attrs["until"] = t.Until
		}
	}
	if t.Set != "" {
		if !ValidSetSpec(t.Set) {
			rep.fail(errBadArgument, "set is not a valid set spec.")
			return nil
		}
		if !fromToken {
			rep.attrs["set"] = t.Set
		}
	}
	if fromToken {
		if !ValidPrefix(t.Prefix) || !h.hasFormat(t.Prefix) {
			rep.fail(errBadResumptionToken, "The resumption token's metadata format is no longer disseminated.")
			return nil
		}
	} else if !h.checkPrefix(rep, t.Prefix) {
		return nil
	}
	if t.Set != "" {
		sets, err := h.repo.Sets(ctx)
		if err != nil {
			return fmt.Errorf("oaipmh: sets: %w", err)
		}
		if len(sets) == 0 {
			rep.fail(errNoSetHierarchy, "This repository does not support sets.")
			return nil
		}
	}

	q := Query{Prefix: t.Prefix, Set: t.Set, From: from, Until: until, After: t.After, Limit: h.opt.PageSize}
	var page []Item
	more := false
	for {
		items, m, err := h.repo.List(ctx, q)
		if err != nil {
			return fmt.Errorf("oaipmh: list: %w", err)
		}
		if len(items) > q.Limit {
			items, m = items[:q.Limit], true
		}
		if len(items) == 0 {
			if m {
				return errors.New("oaipmh: List returned no items but said more follow")
			}
			break
		}
		for _, it := range items {
			if it.has(t.Prefix) {
				page = append(page, it)
			}
		}
		more = m
		last := items[len(items)-1].Position
		if m && last == q.After {
			return errors.New("oaipmh: List's position did not advance")
		}
		q.After = last
		if len(page) > 0 || !m {
			break
		}
	}
	if len(page) == 0 {
		rep.fail(errNoRecordsMatch, "No records match the request.")
		return nil
	}

	e := &errWriter{w: &rep.body}
	e.s("<", verb, ">")
	for _, it := range page {
		if verb == "ListRecords" {
			if err := writeRecord(e, it, t.Prefix); err != nil {
				return err
			}
		} else {
			writeHeader(e, it)
		}
	}
	cursor := fmt.Sprint(t.Cursor)
	switch {
	case more:
		next := t
		next.After = q.After
		next.Cursor = t.Cursor + len(page)
		s, err := encodeToken(h.opt.TokenKey, next)
		if err != nil {
			return fmt.Errorf("oaipmh: %w", err)
		}
		e.s(`<resumptionToken cursor="`, cursor, `">`, s, "</resumptionToken>")
	case fromToken:
		// The last page of a list in several: an empty token says so.
		e.s(`<resumptionToken cursor="`, cursor, `"/>`)
	}
	e.s("</", verb, ">\n")
	return e.err
}

func (h *handler) hasFormat(prefix string) bool {
	for _, f := range h.repo.Formats() {
		if f.Prefix == prefix {
			return true
		}
	}
	return false
}

// parseRange parses from and until ("" for open). Both must be a date
// (YYYY-MM-DD) or a time in seconds (YYYY-MM-DDThh:mm:ssZ), of the same
// granularity when both are given, and from must not be after until. A
// date as until means the end of that day.
func parseRange(fs, us string) (from, until time.Time, ok bool) {
	var fDay, uDay bool
	if fs != "" {
		if from, fDay, ok = parseStamp(fs); !ok {
			return
		}
	}
	if us != "" {
		if until, uDay, ok = parseStamp(us); !ok {
			return
		}
		if uDay {
			until = until.Add(24*time.Hour - time.Second)
		}
	}
	if fs != "" && us != "" && (fDay != uDay || from.After(until)) {
		return from, until, false
	}
	return from, until, true
}

func parseStamp(s string) (time.Time, bool, bool) {
	switch len(s) {
	case len("2006-01-02"):
		t, err := time.Parse("2006-01-02", s)
		return t, true, err == nil
	case len("2006-01-02T15:04:05Z"):
		t, err := time.Parse("2006-01-02T15:04:05Z", s)
		return t, false, err == nil
	}
	return time.Time{}, false, false
}

func writeHeader(e *errWriter, it Item) {
	if it.Deleted {
		e.s(`<header status="deleted">`)
	} else {
		e.s("<header>")
	}
	e.elem("identifier", it.Identifier)
	e.elem("datestamp", stamp(it.Datestamp))
	for _, s := range it.Sets {
		e.elem("setSpec", s)
	}
	e.s("</header>")
}

// writeRecord writes a record: header, and metadata unless deleted.
func writeRecord(e *errWriter, it Item, prefix string) error {
	e.s("<record>")
	writeHeader(e, it)
	if !it.Deleted {
		if it.Metadata == nil {
			return fmt.Errorf("oaipmh: item %q has no Metadata writer", it.Identifier)
		}
		var buf bytes.Buffer
		if err := it.Metadata(&buf, prefix); err != nil {
			return fmt.Errorf("oaipmh: metadata of %q in %s: %w", it.Identifier, prefix, err)
		}
		if err := oneElement(buf.Bytes()); err != nil {
			return fmt.Errorf("oaipmh: metadata of %q in %s: %w", it.Identifier, prefix, err)
		}
		e.s("<metadata>")
		e.s(buf.String())
		e.s("</metadata>")
	}
	e.s("</record>\n")
	return e.err
}

// oneElement checks that b is well-formed XML made of exactly one element
// (whitespace around it allowed, no declaration or processing instruction),
// so a faulty metadata writer cannot break the response document.
func oneElement(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	depth, roots := 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("not well-formed XML: %w", err)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(v)) > 0 {
				return errors.New("text outside the root element")
			}
		case xml.ProcInst, xml.Directive:
			return errors.New("declaration, processing instruction or directive in metadata")
		}
	}
	if roots != 1 || depth != 0 {
		return fmt.Errorf("%d root elements, want 1", roots)
	}
	return nil
}
