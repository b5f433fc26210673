package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/publish/datacite"
	"github.com/strata-archaeo/strata/core/publish/doi"
	"github.com/strata-archaeo/strata/core/store"
)

// KindDOI is the job kind that mints the DOI of a done snapshot.
const KindDOI = "publish.doi"

// A snapshot's doi_status: pending (a minting job is queued), minting (a
// job holds the minting), registered (the DOI is findable), failed (the
// last attempt stopped; DOIError says why). None (null) when the snapshot
// was made without a DOI provider or nothing was started yet.
const (
	DOIPending    = "pending"
	DOIMinting    = "minting"
	DOIRegistered = "registered"
	DOIFailed     = "failed"
)

// Errors of minting.
var (
	ErrDOIRegistered    = errs.New(errs.Conflict, "doi_already_registered", "this snapshot already has a DOI")
	ErrDOINotConfigured = errs.New(errs.Conflict, "doi_not_configured", "this snapshot was made without a DOI provider in the publication settings")
	ErrDOIMinting       = errs.New(errs.Conflict, "doi_minting", "a DOI is being minted for this snapshot; wait for it to end")
	ErrDOINoSecret      = errs.New(errs.Conflict, "doi_secret_missing", "no DOI credential is set: send doi_secret with the publication settings")
	ErrDOIPrevious      = errs.New(errs.Conflict, "doi_previous_unregistered", "the previous version has no DOI yet: mint it first, then retry this one")
	errDOINotQueued     = errs.New(errs.Unavailable, "doi_not_queued", "the DOI minting could not be queued; retry it")
)

// DOIError is why the last minting attempt of a snapshot failed.
type DOIError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Retryable is true for a transient failure (the service was down or
	// the connection was lost): retrying resumes where it stopped.
	Retryable bool `json:"retryable"`
}

// mintRecord is what doi_state holds: the provider's resumable State,
// with the job that holds (or last held) the minting and the last
// failure. Its JSON is a doi.State with two more keys.
type mintRecord struct {
	doi.State
	Job   int64     `json:"job,omitempty"`
	Error *DOIError `json:"error,omitempty"`
}

func decodeMintRecord(raw *string) mintRecord {
	var r mintRecord
	if raw != nil && *raw != "" {
		// A record that does not parse starts over: DataCite's PUT and
		// Zenodo's marker still keep a second attempt from minting twice.
		_ = json.Unmarshal([]byte(*raw), &r)
	}
	return r
}

// doiErrorOf is the snapshot's last minting failure (nil: none).
func doiErrorOf(s *Snapshot) *DOIError {
	if s.DOIStatus == nil || *s.DOIStatus != DOIFailed {
		return nil
	}
	return decodeMintRecord(s.doiRaw).Error
}

type doiArgs struct {
	Snapshot int64 `json:"snapshot"`
}

// doiResult is the minting job's result.
type doiResult struct {
	Snapshot int64  `json:"snapshot"`
	DOI      string `json:"doi"`
	URL      string `json:"url"`
}

// registerDOI adds the minting job kind. A minting runs once per job
// (a failure is recorded on the snapshot and retried by an admin from
// the saved state); Mint's resumable steps make a retry safe.
func registerDOI(d Deps) {
	d.Jobs.Register(KindDOI, func(ctx context.Context, run *jobs.Run) (any, error) {
		var a doiArgs
		if err := run.Bind(&a); err != nil {
			return nil, err
		}
		app, err := d.Apps.Get(ctx, run.App())
		if err != nil {
			return nil, err
		}
		return d.mintSnapshot(ctx, app, a.Snapshot, run.ID())
	}, jobs.Timeout(2*time.Hour))
}

// queueDOI queues the minting of a snapshot that was just done, marking
// it pending. A failure to queue is recorded on the snapshot (an admin
// retries it) rather than failing the snapshot, which is done.
func (d Deps) queueDOI(ctx context.Context, app *apps.App, id, user int64) {
	ctx = context.WithoutCancel(ctx)
	db := app.DB
	job, err := d.Jobs.Enqueue(ctx, app.Name, user, KindDOI, doiArgs{Snapshot: id})
	rec := mintRecord{Job: job.ID}
	status := DOIPending
	if err != nil {
		rec, status = mintRecord{Error: &DOIError{Code: errDOINotQueued.Code, Message: errDOINotQueued.Message, Retryable: true}}, DOIFailed
	}
	raw, _ := json.Marshal(rec)
	// Only if nothing started meanwhile: the job may already hold it.
	_, _ = db.Exec(ctx, `UPDATE `+db.Sys("publish_snapshots")+` SET doi_status = ?, doi_state = ? WHERE id = ? AND doi_status IS NULL`,
		status, string(raw), id)
}

// jobLive reports whether job is queued or running.
func (d Deps) jobLive(ctx context.Context, id int64) (bool, error) {
	if id == 0 || d.Jobs == nil {
		return false, nil
	}
	j, err := d.Jobs.Get(ctx, id)
	if errors.Is(err, jobs.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return !j.State.Finished(), nil
}

// mintable checks that s may be (re)minted now by a job other than job:
// done, with a provider, not registered, not held by a live job.
func (d Deps) mintable(ctx context.Context, s *Snapshot, job int64) error {
	if s.Status != StatusDone || s.blobKey == nil || s.Version == nil {
		// Not "status": that key is the answer envelope's.
		return ErrNotDone.With("snapshot_status", s.Status)
	}
	if s.Frozen().Config.DOI.Provider == "" {
		return ErrDOINotConfigured
	}
	status := ""
	if s.DOIStatus != nil {
		status = *s.DOIStatus
	}
	if status == DOIRegistered {
		e := ErrDOIRegistered
		if s.DOI != nil {
			e = e.With("doi", *s.DOI)
		}
		return e
	}
	if rec := decodeMintRecord(s.doiRaw); rec.Job != job && (status == DOIPending || status == DOIMinting) {
		live, err := d.jobLive(ctx, rec.Job)
		if err != nil {
			return err
		}
		if live {
			return ErrDOIMinting.With("job", rec.Job)
		}
	}
	return nil
}

// claim makes job the one minting s: a compare-and-set of the row from
// the status and state read, so of two jobs racing one wins and the
// other is refused with ErrDOIMinting.
func claim(ctx context.Context, db *store.DB, s *Snapshot, job int64) (mintRecord, string, error) {
	rec := decodeMintRecord(s.doiRaw)
	rec.Job, rec.Error = job, nil
	raw, err := json.Marshal(rec)
	if err != nil {
		return rec, "", err
	}
	oldStatus, oldState := "", ""
	if s.DOIStatus != nil {
		oldStatus = *s.DOIStatus
	}
	if s.doiRaw != nil {
		oldState = *s.doiRaw
	}
	res, err := db.Exec(ctx, `UPDATE `+db.Sys("publish_snapshots")+` SET doi_status = ?, doi_state = ? WHERE id = ? AND status = 'done' AND COALESCE(doi_status, '') = ? AND COALESCE(doi_state, '') = ?`,
		DOIMinting, string(raw), s.ID, oldStatus, oldState)
	if err != nil {
		return rec, "", fmt.Errorf("publish: claim the DOI minting of snapshot %d: %w", s.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return rec, "", ErrDOIMinting
	}
	return rec, string(raw), nil
}

// mintSnapshot mints the DOI of snapshot id as job: claims it, runs the
// provider from the saved state (saving after every remote step) and
// records the outcome.
func (d Deps) mintSnapshot(ctx context.Context, app *apps.App, id, job int64) (*doiResult, error) {
	db := app.DB
	s, err := getSnapshot(ctx, db, id)
	if err != nil {
		return nil, err
	}
	if s.DOIStatus != nil && *s.DOIStatus == DOIRegistered && s.DOI != nil {
		// Queued twice: the first did it.
		return &doiResult{Snapshot: id, DOI: *s.DOI, URL: "https://doi.org/" + *s.DOI}, nil
	}
	// The row may change between the read and the claim (queueDOI marks
	// it pending just after queueing this job): read again and retry.
	var rec mintRecord
	var held string
	for try := 0; ; try++ {
		if err := d.mintable(ctx, s, job); err != nil {
			return nil, err
		}
		rec, held, err = claim(ctx, db, s, job)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrDOIMinting) || try == 2 {
			return nil, err
		}
		if s, err = getSnapshot(ctx, db, id); err != nil {
			return nil, err
		}
	}
	// Writes that record what the remote side did must land even when the
	// job is being cancelled: they are what a retry resumes from.
	bg := context.WithoutCancel(ctx)
	write := func(status, doiName *string, r mintRecord) error {
		raw, err := json.Marshal(r)
		if err != nil {
			return err
		}
		q := `UPDATE ` + db.Sys("publish_snapshots") + ` SET doi_state = ?`
		args := []any{string(raw)}
		if status != nil {
			q += `, doi_status = ?`
			args = append(args, *status)
		}
		if doiName != nil {
			q += `, doi = ?`
			args = append(args, *doiName)
		}
		res, err := db.Exec(bg, q+` WHERE id = ? AND doi_status = ? AND doi_state = ?`, append(args, id, DOIMinting, held)...)
		if err != nil {
			return fmt.Errorf("publish: save the DOI state of snapshot %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrDOIMinting.With("detail", "the minting was taken over")
		}
		held = string(raw)
		return nil
	}
	save := func(st doi.State) error {
		rec.State = st
		return write(nil, nil, rec)
	}
	res, err := d.mint(ctx, app, s, rec.State, save)
	if err != nil {
		if errors.Is(err, ErrDOIMinting) {
			return nil, err // no longer ours: leave the row to its holder
		}
		rec.Error = doiErrorFrom(err)
		failed := DOIFailed
		if werr := write(&failed, nil, rec); werr != nil {
			return nil, errors.Join(err, werr)
		}
		return nil, err
	}
	registered := DOIRegistered
	if err := write(&registered, &res.DOI, rec); err != nil {
		return nil, err
	}
	return &doiResult{Snapshot: id, DOI: res.DOI, URL: res.URL}, nil
}

// doiErrorFrom is what the snapshot shows of a failure: a coded error's
// safe message, never a Go error's text (which may carry an address).
func doiErrorFrom(err error) *DOIError {
	if e, ok := errs.As(err); ok && e.Kind != errs.Internal {
		return &DOIError{Code: e.Code, Message: e.Message, Retryable: doi.Retryable(err) || errors.Is(err, ErrDOIPrevious)}
	}
	return &DOIError{Code: "internal_error", Message: "the DOI could not be minted because of an internal error; it has been logged", Retryable: true}
}

// mint builds the request of s and runs its provider from st.
func (d Deps) mint(ctx context.Context, app *apps.App, s *Snapshot, st doi.State, save func(doi.State) error) (doi.Result, error) {
	fr := s.Frozen()
	cfg := fr.Config
	secret, err := loadSecret(ctx, app.DB, d.Apps.Keyring(), app.Name)
	if err != nil {
		if errors.Is(err, ErrNoKeyring) {
			return doi.Result{}, err
		}
		return doi.Result{}, fmt.Errorf("publish: open the DOI credential: %w", err)
	}
	if secret == "" {
		return doi.Result{}, ErrDOINoSecret
	}
	p, err := providerFor(cfg.DOI, secret)
	if err != nil {
		return doi.Result{}, err
	}
	prev, err := previousState(ctx, app.DB, s)
	if err != nil {
		return doi.Result{}, err
	}
	version := *s.Version
	var published time.Time
	if s.PublishedAt != nil {
		published = *s.PublishedAt
	}
	var records int64
	if s.Records != nil {
		records = *s.Records
	}
	md := dataciteOf(&cfg, s, version, SnapshotURI(fr.BaseURL, version), published, records)
	md.DOI = ""
	if prev != nil {
		// The previous version has a DOI in the same account: the provider
		// relates the two by their DOIs, which replace the landing page's.
		md.RelatedIdentifiers = slices.DeleteFunc(md.RelatedIdentifiers, func(r datacite.Related) bool {
			return r.Relation == "IsNewVersionOf" && r.Type == "URL"
		})
	}
	key, size := *s.blobKey, int64(0)
	if s.Size != nil {
		size = *s.Size
	}
	req := doi.Request{
		Key:      app.Name + "/snapshot/" + strconv.FormatInt(s.ID, 10),
		Metadata: md,
		Files: []doi.File{{Name: app.Name + "-v" + strconv.FormatInt(version, 10) + ".zip", Size: size,
			Open: func() (io.ReadCloser, error) { return d.Files.Get(ctx, app.Name, key) }}},
		Previous: prev,
	}
	return p.Mint(ctx, req, st, save)
}

// previousState is the final State of the version s follows, when that
// version was minted with the same provider account (then the new DOI is
// a new version of it); nil when it has none (a new line of versions).
// A previous version whose minting is not done yet is ErrDOIPrevious:
// minting now would lose the link.
func previousState(ctx context.Context, db *store.DB, s *Snapshot) (*doi.State, error) {
	if s.Previous == nil {
		return nil, nil
	}
	prev, err := snapshotByVersion(ctx, db, *s.Previous)
	if errors.Is(err, ErrSnapshotNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !sameAccount(prev.Frozen().Config.DOI, s.Frozen().Config.DOI) {
		return nil, nil
	}
	rec := decodeMintRecord(prev.doiRaw)
	if prev.DOIStatus == nil || *prev.DOIStatus != DOIRegistered || rec.Step != "done" {
		return nil, ErrDOIPrevious.With("version", *s.Previous)
	}
	st := rec.State
	return &st, nil
}

// sameAccount reports whether two settings mint with the same provider
// account, so that one may update the other's records.
func sameAccount(a, b DOI) bool {
	if a.Provider == "" || a.Provider != b.Provider || a.BaseURL != b.BaseURL {
		return false
	}
	return a.Provider != "datacite" || (a.RepositoryID == b.RepositoryID && a.Prefix == b.Prefix)
}

// doiHTTP is the client minting uses: bounded waits for connections and
// answers, none for the body (Zenodo's upload of a large crate); the job's
// timeout bounds the whole.
var doiHTTP = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	TLSHandshakeTimeout:   30 * time.Second,
	ResponseHeaderTimeout: 5 * time.Minute,
	IdleConnTimeout:       90 * time.Second,
	MaxIdleConnsPerHost:   2,
}}

func providerFor(c DOI, secret string) (doi.Provider, error) {
	switch c.Provider {
	case "datacite":
		return doi.NewDataCite(c.BaseURL, c.RepositoryID, secret, c.Prefix, doiHTTP), nil
	case "zenodo":
		return doi.NewZenodo(c.BaseURL, secret, doiHTTP), nil
	}
	return nil, ErrDOINotConfigured
}

// POST /publish/snapshots/{id}/doi — (re)starts the minting of a done
// snapshot's DOI from the state saved by the last attempt: 202 {code:
// doi_started, job}. 409 doi_already_registered, snapshot_not_done,
// doi_not_configured, doi_minting (a job holds it).
func (h handlers) startDOI(c *gin.Context) {
	if h.d.Jobs == nil {
		api.Fail(c, jobs.ErrUnavailable)
		return
	}
	if err := emptyBody(c); err != nil {
		api.Fail(c, err)
		return
	}
	id, err := snapshotParam(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	ctx := c.Request.Context()
	app := api.AppOf(c)
	s, err := getSnapshot(ctx, app.DB, id)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if err := h.d.mintable(ctx, s, 0); err != nil {
		api.Fail(c, err)
		return
	}
	job, err := h.d.Jobs.Enqueue(ctx, app.Name, api.ActorOf(c).UserID, KindDOI, doiArgs{Snapshot: s.ID})
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusAccepted, gin.H{"code": "doi_started", "job": jobs.Wire(job)})
}

// emptyBody refuses a body other than nothing or {}.
func emptyBody(c *gin.Context) error {
	raw, err := io.ReadAll(io.LimitReader(c.Request.Body, 1024))
	if err != nil {
		return api.BodyReadErr(err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(raw, &probe) != nil || len(probe) > 0 {
		return errs.New(errs.Invalid, "invalid_body", "this route takes no parameters")
	}
	return nil
}
