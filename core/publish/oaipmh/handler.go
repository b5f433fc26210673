package oaipmh

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"time"
	"unicode/utf8"
)

// Bounds on what a request may carry; beyond them the answer is badArgument.
const (
	maxRequest    = 8 << 10 // query string or POST body, bytes
	maxIdentifier = 1024    // identifier argument, bytes
	maxShortArg   = 256     // metadataPrefix, set, from, until, verb
	defaultPage   = 100
)

// OAI-PMH error codes.
const (
	errBadArgument             = "badArgument"
	errBadResumptionToken      = "badResumptionToken"
	errBadVerb                 = "badVerb"
	errCannotDisseminateFormat = "cannotDisseminateFormat"
	errIDDoesNotExist          = "idDoesNotExist"
	errNoMetadataFormats       = "noMetadataFormats"
	errNoRecordsMatch          = "noRecordsMatch"
	errNoSetHierarchy          = "noSetHierarchy"
)

// The patterns of OAI-PMH.xsd's setSpecType and metadataPrefixType.
var (
	setSpecRe = regexp.MustCompile(`^[A-Za-z0-9\-_.!~*'()]+(:[A-Za-z0-9\-_.!~*'()]+)*$`)
	prefixRe  = regexp.MustCompile(`^[A-Za-z0-9\-_.!~*'()]+$`)
)

// ValidSetSpec reports whether s may be a set spec (OAI-PMH.xsd's
// setSpecType): unreserved URI characters in colon-separated parts.
func ValidSetSpec(s string) bool { return len(s) <= maxShortArg && setSpecRe.MatchString(s) }

// ValidPrefix reports whether s may be a metadataPrefix.
func ValidPrefix(s string) bool { return len(s) <= maxShortArg && prefixRe.MatchString(s) }

// args allowed per verb (besides verb itself) and which are required.
var verbArgs = map[string]struct{ allowed, required []string }{
	"Identify":            {},
	"ListMetadataFormats": {allowed: []string{"identifier"}},
	"ListSets":            {allowed: []string{"resumptionToken"}},
	"GetRecord":           {allowed: []string{"identifier", "metadataPrefix"}, required: []string{"identifier", "metadataPrefix"}},
	"ListIdentifiers":     {allowed: []string{"metadataPrefix", "from", "until", "set", "resumptionToken"}},
	"ListRecords":         {allowed: []string{"metadataPrefix", "from", "until", "set", "resumptionToken"}},
}

// attrOrder fixes the order of the request element's attributes.
var attrOrder = []string{"verb", "identifier", "metadataPrefix", "from", "until", "set", "resumptionToken"}

// Handler returns the OAI-PMH endpoint over repo. Mount it at the base URL
// the Repository's Identity gives (e.g. /<app>/oai). Protocol errors are
// answered 200 with an error element, as OAI-PMH requires; a failing
// Repository is answered 500 with no body detail.
func Handler(repo Repository, opt Options) http.Handler {
	if opt.PageSize <= 0 {
		opt.PageSize = defaultPage
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &handler{repo: repo, opt: opt}
}

type handler struct {
	repo Repository
	opt  Options
}

// reply is one answer before it is wrapped in the envelope.
type reply struct {
	attrs   map[string]string // echoed arguments, only valid ones
	errCode string
	errMsg  string
	body    bytes.Buffer // the verb element, when no error
}

func (r *reply) fail(code, msg string) *reply {
	r.errCode, r.errMsg = code, msg
	if code == errBadArgument || code == errBadVerb {
		r.attrs = nil // the protocol says: base URL only
	}
	return r
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, err := h.repo.Identify(ctx)
	if err == nil {
		err = checkIdentity(id)
	}
	if err != nil {
		http.Error(w, "OAI-PMH repository unavailable", http.StatusInternalServerError)
		return
	}
	var rep *reply
	switch r.Method {
	case http.MethodGet, http.MethodPost:
		raw, ok := readArgs(r)
		if !ok {
			rep = (&reply{}).fail(errBadArgument, "The request is too large or not application/x-www-form-urlencoded.")
			break
		}
		rep, err = h.dispatch(r, raw, id)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "OAI-PMH takes GET or POST", http.StatusMethodNotAllowed)
		return
	}
	if err != nil {
		http.Error(w, "OAI-PMH repository error", http.StatusInternalServerError)
		return
	}
	var out bytes.Buffer
	h.envelope(&out, id, rep)
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.Header().Set("Content-Length", fmt.Sprint(out.Len()))
	_, _ = w.Write(out.Bytes())
}

// readArgs returns the raw argument string: the query for GET, the
// form-encoded body for POST, bounded by maxRequest.
func readArgs(r *http.Request) (string, bool) {
	if r.Method == http.MethodGet {
		return r.URL.RawQuery, len(r.URL.RawQuery) <= maxRequest
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return "", false
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
	if err != nil || len(b) > maxRequest {
		return "", false
	}
	return string(b), true
}

func (h *handler) dispatch(r *http.Request, raw string, id Identity) (*reply, error) {
	rep := &reply{}
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return rep.fail(errBadArgument, "The arguments are not valid URL encoding."), nil
	}
	verbs := vals["verb"]
	if len(verbs) != 1 {
		return rep.fail(errBadVerb, "The verb argument is missing or repeated."), nil
	}
	verb := verbs[0]
	spec, ok := verbArgs[verb]
	if !ok {
		return rep.fail(errBadVerb, "Illegal OAI-PMH verb."), nil
	}
	args := map[string]string{}
	for k, vs := range vals {
		if k == "verb" {
			continue
		}
		if !contains(spec.allowed, k) {
			return rep.fail(errBadArgument, "Illegal argument for "+verb+"."), nil
		}
		if len(vs) != 1 {
			return rep.fail(errBadArgument, "Repeated argument."), nil
		}
		if !goodValue(k, vs[0]) {
			return rep.fail(errBadArgument, "An argument is too long or not valid UTF-8 text."), nil
		}
		args[k] = vs[0]
	}
	if t, ok := args["resumptionToken"]; ok {
		if len(args) != 1 {
			return rep.fail(errBadArgument, "resumptionToken is an exclusive argument."), nil
		}
		rep.attrs = map[string]string{"verb": verb, "resumptionToken": t}
	} else {
		for _, k := range spec.required {
			if _, ok := args[k]; !ok {
				return rep.fail(errBadArgument, "Missing required argument "+k+"."), nil
			}
		}
		if (verb == "ListRecords" || verb == "ListIdentifiers") && args["metadataPrefix"] == "" {
			return rep.fail(errBadArgument, "Missing required argument metadataPrefix."), nil
		}
		rep.attrs = map[string]string{"verb": verb}
	}
	ctx := r.Context()
	switch verb {
	case "Identify":
		e := &errWriter{w: &rep.body}
		writeIdentify(e, id)
		return rep, e.err
	case "ListMetadataFormats":
		return rep, h.listMetadataFormats(ctx, rep, args)
	case "ListSets":
		return rep, h.listSets(ctx, rep, args)
	case "GetRecord":
		return rep, h.getRecord(ctx, rep, args)
	default:
		return rep, h.list(ctx, rep, verb, args)
	}
}

// goodValue bounds an argument and requires XML-safe UTF-8 text.
func goodValue(k, v string) bool {
	limit := maxShortArg
	switch k {
	case "identifier":
		limit = maxIdentifier
	case "resumptionToken":
		limit = maxToken
	}
	if len(v) > limit || !utf8.ValidString(v) {
		return false
	}
	for _, r := range v {
		if !xmlChar(r) {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func checkIdentity(id Identity) error {
	if id.BaseURL == "" || id.RepositoryName == "" || len(id.AdminEmails) == 0 {
		return errors.New("oaipmh: Identity needs RepositoryName, BaseURL and AdminEmails")
	}
	switch id.DeletedRecord {
	case "", DeletedNo, DeletedTransient, DeletedPersistent:
		return nil
	}
	return fmt.Errorf("oaipmh: Identity.DeletedRecord %q", id.DeletedRecord)
}

// envelope writes the whole response document.
func (h *handler) envelope(out *bytes.Buffer, id Identity, rep *reply) {
	e := &errWriter{w: out}
	e.s(`<?xml version="1.0" encoding="UTF-8"?>`, "\n",
		`<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"`,
		` xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`,
		` xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/ http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">`, "\n")
	e.elem("responseDate", stamp(h.opt.Now()))
	e.s("\n<request")
	for _, k := range attrOrder {
		if v, ok := rep.attrs[k]; ok {
			e.s(" ", k, `="`, escape(v), `"`)
		}
	}
	e.s(">", escape(id.BaseURL), "</request>\n")
	if rep.errCode != "" {
		e.s(`<error code="`, rep.errCode, `">`, escape(rep.errMsg), "</error>\n")
	} else {
		e.s(rep.body.String())
	}
	e.s("</OAI-PMH>\n")
}

// stamp formats a datestamp in seconds granularity, UTC.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }
