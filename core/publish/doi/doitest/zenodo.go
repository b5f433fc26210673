package doitest

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Zenodo is a fake of Zenodo's deposition API (/api/deposit/depositions,
// its actions and file buckets under /api/files).
type Zenodo struct {
	// URL is the base URL to give doi.NewZenodo.
	URL string

	token  string
	faults faults
	mu     sync.Mutex
	deps   map[int64]*Deposition
	nextID int64
}

// Deposition is one deposition held by the fake.
type Deposition struct {
	ID int64
	// ConceptID groups the versions of one record.
	ConceptID int64
	// PreviousID is the deposition this one is a new version of (0: none).
	PreviousID int64
	Submitted  bool
	// DOI is set on publish: 10.5072/zenodo.<ID>.
	DOI       string
	Metadata  map[string]any
	Files     []File
	Bucket    string
	Publishes int
	// draft is the unpublished new version of this deposition, if any.
	draft int64
}

// File is a file in a deposition.
type File struct {
	ID, Name string
	Size     int64
	MD5      string // hex
}

// NewZenodo starts a fake Zenodo that accepts the personal access token.
func NewZenodo(t testing.TB, token string) *Zenodo {
	z := &Zenodo{token: token, deps: map[int64]*Deposition{}, nextID: 1000}
	srv := httptest.NewServer(http.HandlerFunc(z.route))
	t.Cleanup(srv.Close)
	z.URL = srv.URL
	return z
}

// FailNext arms a fault for the next request of step: "create",
// "newversion", "list", "get", "delete-file", "upload", "metadata",
// "publish".
func (z *Zenodo) FailNext(step string, mode Mode) { z.faults.arm(step, mode) }

// Pending reports how many armed faults have not fired.
func (z *Zenodo) Pending() int { return z.faults.pending() }

// Depositions returns copies of every deposition, sorted by ID.
func (z *Zenodo) Depositions() []Deposition {
	z.mu.Lock()
	defer z.mu.Unlock()
	var out []Deposition
	for _, d := range z.deps {
		c := *d
		c.Metadata = maps.Clone(d.Metadata)
		c.Files = slices.Clone(d.Files)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Deposition) int { return int(a.ID - b.ID) })
	return out
}

func zErr(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"message": msg, "status": status})
}

func (z *Zenodo) route(w http.ResponseWriter, r *http.Request) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if tok == "" {
		tok = r.URL.Query().Get("access_token")
	}
	if tok != z.token {
		zErr(w, http.StatusUnauthorized, "The server could not verify that you are authorized to access the URL requested.")
		return
	}
	if bucket, ok := strings.CutPrefix(r.URL.Path, "/api/files/"); ok {
		b, name, _ := strings.Cut(bucket, "/")
		if r.Method != http.MethodPut || name == "" {
			zErr(w, http.StatusMethodNotAllowed, "Method not allowed")
			return
		}
		z.faults.serve("upload", w, r, func(w http.ResponseWriter, r *http.Request) { z.upload(w, r, b, name) })
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/deposit/depositions")
	if !ok {
		zErr(w, http.StatusNotFound, "The requested URL was not found on the server.")
		return
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if parts[0] == "" {
		parts = nil
	}
	if (r.Method == http.MethodPost || r.Method == http.MethodPut) && (len(parts) != 3 || r.ContentLength > 0) {
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			zErr(w, http.StatusUnsupportedMediaType, "Unsupported media type; use application/json")
			return
		}
	}
	var id int64
	if len(parts) > 0 {
		n, err := strconv.ParseInt(parts[0], 10, 64)
		if err != nil {
			zErr(w, http.StatusNotFound, "Deposition not found")
			return
		}
		id = n
	}
	switch {
	case len(parts) == 0 && r.Method == http.MethodGet:
		z.faults.serve("list", w, r, func(w http.ResponseWriter, r *http.Request) { z.list(w, r) })
	case len(parts) == 0 && r.Method == http.MethodPost:
		z.faults.serve("create", w, r, func(w http.ResponseWriter, r *http.Request) { z.create(w, r) })
	case len(parts) == 1 && r.Method == http.MethodGet:
		z.faults.serve("get", w, r, func(w http.ResponseWriter, r *http.Request) { z.get(w, id) })
	case len(parts) == 1 && r.Method == http.MethodPut:
		z.faults.serve("metadata", w, r, func(w http.ResponseWriter, r *http.Request) { z.metadata(w, r, id) })
	case len(parts) == 3 && parts[1] == "files" && r.Method == http.MethodDelete:
		z.faults.serve("delete-file", w, r, func(w http.ResponseWriter, r *http.Request) { z.deleteFile(w, id, parts[2]) })
	case len(parts) == 3 && parts[1] == "actions" && parts[2] == "publish" && r.Method == http.MethodPost:
		z.faults.serve("publish", w, r, func(w http.ResponseWriter, r *http.Request) { z.publish(w, id) })
	case len(parts) == 3 && parts[1] == "actions" && parts[2] == "newversion" && r.Method == http.MethodPost:
		z.faults.serve("newversion", w, r, func(w http.ResponseWriter, r *http.Request) { z.newVersion(w, id) })
	default:
		zErr(w, http.StatusMethodNotAllowed, "Method not allowed")
	}
}

// view renders a deposition as the API does. Callers hold z.mu.
func (z *Zenodo) view(d *Deposition) map[string]any {
	self := fmt.Sprintf("%s/api/deposit/depositions/%d", z.URL, d.ID)
	links := map[string]any{
		"self": self, "html": fmt.Sprintf("%s/deposit/%d", z.URL, d.ID),
		"bucket": z.URL + "/api/files/" + d.Bucket, "files": self + "/files",
		"publish": self + "/actions/publish", "edit": self + "/actions/edit",
		"discard": self + "/actions/discard", "newversion": self + "/actions/newversion",
	}
	if d.draft != 0 {
		links["latest_draft"] = fmt.Sprintf("%s/api/deposit/depositions/%d", z.URL, d.draft)
	}
	md := maps.Clone(d.Metadata)
	md["prereserve_doi"] = map[string]any{"doi": fmt.Sprintf("10.5072/zenodo.%d", d.ID), "recid": d.ID}
	var files []any
	for _, f := range d.Files {
		files = append(files, map[string]any{"id": f.ID, "filename": f.Name, "filesize": f.Size, "checksum": f.MD5})
	}
	state := "unsubmitted"
	if d.Submitted {
		state = "done"
	}
	v := map[string]any{
		"id": d.ID, "record_id": d.ID, "conceptrecid": strconv.FormatInt(d.ConceptID, 10),
		"state": state, "submitted": d.Submitted, "title": d.Metadata["title"],
		"created": "2026-01-01T00:00:00+00:00", "modified": "2026-01-01T00:00:00+00:00",
		"owner": 1, "metadata": md, "files": files, "links": links,
	}
	if d.Submitted {
		v["doi"] = d.DOI
		v["doi_url"] = "https://doi.org/" + d.DOI
		v["conceptdoi"] = fmt.Sprintf("10.5072/zenodo.%d", d.ConceptID)
	}
	return v
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (z *Zenodo) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	text := strings.Trim(q.Get("q"), `"`)
	size, _ := strconv.Atoi(q.Get("size"))
	if size <= 0 {
		size = 10
	}
	page, _ := strconv.Atoi(q.Get("page"))
	if page <= 0 {
		page = 1
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	var ids []int64
	for id, d := range z.deps {
		if s := q.Get("status"); (s == "draft" && d.Submitted) || (s == "published" && !d.Submitted) {
			continue
		}
		if text != "" {
			b, _ := json.Marshal(d.Metadata)
			if !strings.Contains(string(b), text) {
				continue
			}
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if q.Get("sort") == "mostrecent" {
		slices.Reverse(ids)
	}
	out := []any{}
	for i := (page - 1) * size; i < len(ids) && i < page*size; i++ {
		out = append(out, z.view(z.deps[ids[i]]))
	}
	writeJSON(w, http.StatusOK, out)
}

func readJSON(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return err
	}
	if len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, v)
}

func (z *Zenodo) create(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := readJSON(r, &body); err != nil {
		zErr(w, http.StatusBadRequest, "Invalid JSON")
		return
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	z.nextID++
	d := &Deposition{ID: z.nextID, ConceptID: z.nextID + 500000, Metadata: body.Metadata, Bucket: fmt.Sprintf("bucket-%d", z.nextID)}
	if d.Metadata == nil {
		d.Metadata = map[string]any{}
	}
	z.deps[d.ID] = d
	writeJSON(w, http.StatusCreated, z.view(d))
}

func (z *Zenodo) get(w http.ResponseWriter, id int64) {
	z.mu.Lock()
	defer z.mu.Unlock()
	d := z.deps[id]
	if d == nil {
		zErr(w, http.StatusNotFound, "Deposition not found")
		return
	}
	writeJSON(w, http.StatusOK, z.view(d))
}

func (z *Zenodo) metadata(w http.ResponseWriter, r *http.Request, id int64) {
	var body struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := readJSON(r, &body); err != nil || body.Metadata == nil {
		zErr(w, http.StatusBadRequest, "Validation error: metadata is required")
		return
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	d := z.deps[id]
	if d == nil {
		zErr(w, http.StatusNotFound, "Deposition not found")
		return
	}
	if d.Submitted {
		zErr(w, http.StatusBadRequest, "Deposition is published; use actions/edit first")
		return
	}
	if _, ok := body.Metadata["doi"]; ok {
		zErr(w, http.StatusBadRequest, "Validation error: doi would replace Zenodo's DOI")
		return
	}
	d.Metadata = body.Metadata
	writeJSON(w, http.StatusOK, z.view(d))
}

func (z *Zenodo) deleteFile(w http.ResponseWriter, id int64, fid string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	d := z.deps[id]
	if d == nil {
		zErr(w, http.StatusNotFound, "Deposition not found")
		return
	}
	if d.Submitted {
		zErr(w, http.StatusForbidden, "Files of a published deposition cannot be deleted")
		return
	}
	i := slices.IndexFunc(d.Files, func(f File) bool { return f.ID == fid })
	if i < 0 {
		zErr(w, http.StatusNotFound, "File not found")
		return
	}
	d.Files = slices.Delete(d.Files, i, i+1)
	w.WriteHeader(http.StatusNoContent)
}

func (z *Zenodo) upload(w http.ResponseWriter, r *http.Request, bucket, name string) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/octet-stream" {
		zErr(w, http.StatusUnsupportedMediaType, "Uploads must be application/octet-stream")
		return
	}
	if r.ContentLength < 0 {
		zErr(w, http.StatusLengthRequired, "Content-Length required")
		return
	}
	h := md5.New()
	n, err := io.Copy(h, r.Body)
	if err != nil || n != r.ContentLength {
		zErr(w, http.StatusBadRequest, "Body does not match Content-Length")
		return
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	var d *Deposition
	for _, x := range z.deps {
		if x.Bucket == bucket {
			d = x
		}
	}
	if d == nil {
		zErr(w, http.StatusNotFound, "Bucket not found")
		return
	}
	if d.Submitted {
		zErr(w, http.StatusForbidden, "Bucket is locked")
		return
	}
	sum := hex.EncodeToString(h.Sum(nil))
	f := File{ID: fmt.Sprintf("f-%d-%s", d.ID, sum[:8]), Name: name, Size: n, MD5: sum}
	if i := slices.IndexFunc(d.Files, func(x File) bool { return x.Name == name }); i >= 0 {
		d.Files[i] = f
	} else {
		d.Files = append(d.Files, f)
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"key": name, "size": n, "checksum": "md5:" + sum, "mimetype": "application/octet-stream",
		"links": map[string]any{"self": z.URL + "/api/files/" + bucket + "/" + name},
	})
}

func (z *Zenodo) publish(w http.ResponseWriter, id int64) {
	z.mu.Lock()
	defer z.mu.Unlock()
	d := z.deps[id]
	if d == nil {
		zErr(w, http.StatusNotFound, "Deposition not found")
		return
	}
	if d.Submitted {
		zErr(w, http.StatusBadRequest, "Deposition is already published")
		return
	}
	var missing []string
	for _, k := range []string{"upload_type", "title", "description", "publication_date"} {
		if s, _ := d.Metadata[k].(string); s == "" {
			missing = append(missing, k)
		}
	}
	if c, _ := d.Metadata["creators"].([]any); len(c) == 0 {
		missing = append(missing, "creators")
	}
	if len(missing) > 0 {
		zErr(w, http.StatusBadRequest, "Validation error: missing "+strings.Join(missing, ", "))
		return
	}
	if len(d.Files) == 0 {
		zErr(w, http.StatusBadRequest, "Validation error: Missing uploaded files")
		return
	}
	d.Submitted = true
	d.DOI = fmt.Sprintf("10.5072/zenodo.%d", d.ID)
	d.Publishes++
	if p := z.deps[d.PreviousID]; p != nil {
		p.draft = 0
	}
	writeJSON(w, http.StatusAccepted, z.view(d))
}

func (z *Zenodo) newVersion(w http.ResponseWriter, id int64) {
	z.mu.Lock()
	defer z.mu.Unlock()
	d := z.deps[id]
	if d == nil {
		zErr(w, http.StatusNotFound, "Deposition not found")
		return
	}
	if !d.Submitted {
		zErr(w, http.StatusBadRequest, "Only a published deposition can get a new version")
		return
	}
	for _, x := range z.deps {
		if x.PreviousID == d.ID && x.Submitted {
			zErr(w, http.StatusBadRequest, "Not the latest version")
			return
		}
	}
	if d.draft == 0 { // one unpublished new version at a time
		z.nextID++
		nv := &Deposition{ID: z.nextID, ConceptID: d.ConceptID, PreviousID: d.ID,
			Metadata: maps.Clone(d.Metadata), Files: slices.Clone(d.Files), Bucket: fmt.Sprintf("bucket-%d", z.nextID)}
		z.deps[nv.ID] = nv
		d.draft = nv.ID
	}
	writeJSON(w, http.StatusCreated, z.view(d))
}
