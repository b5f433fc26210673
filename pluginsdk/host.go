package pluginsdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/grpc"

	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// Host is the server, as the plugin reaches it: the only way a plugin gets
// at data. Configure hands it over; it is safe for concurrent use and stays
// valid for the life of the process. Rows are JSON objects decoded as Row
// values are (numbers as json.Number).
type Host interface {
	// QueryRecords lists records of an application's table with the filter
	// language, as in.Actor would see them; total counts all matches.
	QueryRecords(ctx context.Context, in QueryRecordsInput) (rows []map[string]any, total int64, err error)
	// ReadSystemRows reads rows (with their id) of one of the plugin's own
	// system tables in an application.
	ReadSystemRows(ctx context.Context, in SystemReadInput) ([]map[string]any, error)
	// WriteSystemRows inserts, updates and deletes rows of one of the
	// plugin's system tables in one transaction; it returns the ids of the
	// upserted rows, in order.
	WriteSystemRows(ctx context.Context, in SystemWriteInput) ([]int64, error)
	// AppSettings returns an application's non-secret settings.
	AppSettings(ctx context.Context, app string) (map[string]string, error)
	// Log writes to the server's structured log, tagged with the plugin.
	Log(ctx context.Context, level LogLevel, message string, fields map[string]string) error
	// Catalog describes an application's tables and how they link.
	Catalog(ctx context.Context, app string) (*Catalog, error)
	// Seal encrypts clear with the instance key, bound to this plugin,
	// app and purpose (e.g. "library_api_key"); store the answer in a
	// system table instead of the clear value. The plugin never sees the
	// key.
	Seal(ctx context.Context, app, purpose, clear string) (sealed string, err error)
	// Open returns the clear text of a value Seal gave for the same
	// plugin, app and purpose; a value sealed for another one, altered,
	// or not sealed at all is refused.
	Open(ctx context.Context, app, purpose, sealed string) (clear string, err error)
	// JobProgress reports how far the job of a job route's call is: job
	// is JobID of its request. cancelled says the job was cancelled: the
	// handler should stop soon (its context ends too).
	JobProgress(ctx context.Context, job string, done, total int64) (cancelled bool, err error)
	// AddGeodata adds a geometry to a record's geodata as in.Actor (see
	// GeodataInput) and returns the new feature's id.
	AddGeodata(ctx context.Context, in GeodataInput) (int64, error)
	// UpdateRecords updates records' columns of the plugin's own features
	// as the system actor "plugin:<name>" (see UpdateRecordsInput) and
	// returns each record's version after its save.
	UpdateRecords(ctx context.Context, in UpdateRecordsInput) ([]int64, error)
	// Stratigraphy returns a table's stratigraphic units as in.Actor sees
	// them, with their chronology dating, and the relations among them
	// (see StratigraphyInput). The table must keep relations: else
	// InvalidArgument, reason rs_not_enabled. (SDK v0.6.0.)
	Stratigraphy(ctx context.Context, in StratigraphyInput) (*Stratigraphy, error)
	// FeatureRows reads the child-table rows of a feature attached to
	// records (e.g. the radiocarbon dates of finds), grouped by record,
	// as in.Actor may read them (see FeatureRowsInput). (SDK v0.6.0.)
	FeatureRows(ctx context.Context, in FeatureRowsInput) (*FeatureRowsResult, error)
}

// QueryRecordsInput selects records for Host.QueryRecords.
type QueryRecordsInput struct {
	App   string
	Table string
	// Filter is a filter object of the filter language (any value that
	// encodes to a JSON object); nil selects everything.
	Filter  any
	Columns []string // empty: every column the actor may read
	Limit   int      // at most 10,000; 0: the server default
	Offset  int
	// SortField and SortDir ("asc" or "desc") order the rows; empty: by id.
	SortField string
	SortDir   string
	// Actor whose rights apply: pass the call's actor so that a plugin
	// never shows a user more than the user may see. nil reads as the
	// plugin itself (every record of the application).
	Actor *Actor
}

// SystemReadInput selects rows of a plugin system table.
type SystemReadInput struct {
	App   string
	Table string // the manifest's name, without the sys_<plugin>_ prefix
	// Filter is a filter object on the table's columns; nil: every row.
	Filter any
	Limit  int // 0: the server default
}

// SystemWriteInput changes rows of a plugin system table.
type SystemWriteInput struct {
	App   string
	Table string
	// Upsert rows: with an "id" key the row is updated, without it inserted.
	Upsert    []map[string]any
	DeleteIDs []int64
}

// LogLevel is the level of a Host.Log line.
type LogLevel string

const (
	LogDebug LogLevel = "debug"
	LogInfo  LogLevel = "info"
	LogWarn  LogLevel = "warn"
	LogError LogLevel = "error"
)

// ErrNoHost is returned by Host calls made before Configure, or when the
// server gave no Host connection.
var ErrNoHost = errors.New("pluginsdk: the Host service is not connected (called before Configure?)")

// hostClient implements Host over the connection brokered at Configure. It
// is created with the server and connected by Configure, so the Host a
// plugin kept keeps working if Configure is called again.
type hostClient struct {
	mu     sync.RWMutex
	conn   *grpc.ClientConn
	client pluginv1.HostClient
}

func (h *hostClient) connect(conn *grpc.ClientConn) {
	h.mu.Lock()
	old := h.conn
	h.conn = conn
	h.client = nil
	if conn != nil {
		h.client = pluginv1.NewHostClient(conn)
	}
	h.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
}

func (h *hostClient) get() (pluginv1.HostClient, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.client == nil {
		return nil, ErrNoHost
	}
	return h.client, nil
}

func (h *hostClient) QueryRecords(ctx context.Context, in QueryRecordsInput) ([]map[string]any, int64, error) {
	c, err := h.get()
	if err != nil {
		return nil, 0, err
	}
	filter, err := optionalJSON(in.Filter)
	if err != nil {
		return nil, 0, fmt.Errorf("query records: filter: %w", err)
	}
	resp, err := c.QueryRecords(ctx, &pluginv1.QueryRequest{
		App: in.App, Table: in.Table, Filter: filter, Columns: in.Columns,
		Limit: int32(in.Limit), Offset: int32(in.Offset),
		SortField: in.SortField, SortDir: in.SortDir, Actor: actorToProto(in.Actor),
	})
	if err != nil {
		return nil, 0, fmt.Errorf("query records: %w", err)
	}
	rows, err := decodeRows(resp.GetRows())
	if err != nil {
		return nil, 0, fmt.Errorf("query records: %w", err)
	}
	return rows, resp.GetTotal(), nil
}

func (h *hostClient) ReadSystemRows(ctx context.Context, in SystemReadInput) ([]map[string]any, error) {
	c, err := h.get()
	if err != nil {
		return nil, err
	}
	filter, err := optionalJSON(in.Filter)
	if err != nil {
		return nil, fmt.Errorf("read system rows: filter: %w", err)
	}
	resp, err := c.ReadSystemRows(ctx, &pluginv1.SystemReadRequest{App: in.App, Table: in.Table, Filter: filter, Limit: int32(in.Limit)})
	if err != nil {
		return nil, fmt.Errorf("read system rows: %w", err)
	}
	rows, err := decodeRows(resp.GetRows())
	if err != nil {
		return nil, fmt.Errorf("read system rows: %w", err)
	}
	return rows, nil
}

func (h *hostClient) WriteSystemRows(ctx context.Context, in SystemWriteInput) ([]int64, error) {
	c, err := h.get()
	if err != nil {
		return nil, err
	}
	var upsert []byte
	if len(in.Upsert) > 0 {
		if upsert, err = encodeJSON(in.Upsert); err != nil {
			return nil, fmt.Errorf("write system rows: %w", err)
		}
	}
	resp, err := c.WriteSystemRows(ctx, &pluginv1.SystemWriteRequest{App: in.App, Table: in.Table, Upsert: upsert, DeleteIds: in.DeleteIDs})
	if err != nil {
		return nil, fmt.Errorf("write system rows: %w", err)
	}
	return resp.GetIds(), nil
}

func (h *hostClient) AppSettings(ctx context.Context, app string) (map[string]string, error) {
	c, err := h.get()
	if err != nil {
		return nil, err
	}
	resp, err := c.AppSettings(ctx, &pluginv1.AppSettingsRequest{App: app})
	if err != nil {
		return nil, fmt.Errorf("app settings: %w", err)
	}
	return resp.GetSettings(), nil
}

func (h *hostClient) Log(ctx context.Context, level LogLevel, message string, fields map[string]string) error {
	c, err := h.get()
	if err != nil {
		return err
	}
	if _, err := c.Log(ctx, &pluginv1.LogRequest{Level: string(level), Message: message, Fields: fields}); err != nil {
		return fmt.Errorf("log: %w", err)
	}
	return nil
}

func (h *hostClient) Seal(ctx context.Context, app, purpose, clear string) (string, error) {
	c, err := h.get()
	if err != nil {
		return "", err
	}
	resp, err := c.Seal(ctx, &pluginv1.SealRequest{App: app, Purpose: purpose, Clear: clear})
	if err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	return resp.GetSealed(), nil
}

func (h *hostClient) Open(ctx context.Context, app, purpose, sealed string) (string, error) {
	c, err := h.get()
	if err != nil {
		return "", err
	}
	resp, err := c.Open(ctx, &pluginv1.OpenRequest{App: app, Purpose: purpose, Sealed: sealed})
	if err != nil {
		return "", fmt.Errorf("open: %w", err)
	}
	return resp.GetClear(), nil
}

func (h *hostClient) JobProgress(ctx context.Context, job string, done, total int64) (bool, error) {
	c, err := h.get()
	if err != nil {
		return false, err
	}
	resp, err := c.JobProgress(ctx, &pluginv1.JobProgressRequest{Job: job, Done: done, Total: total})
	if err != nil {
		return false, fmt.Errorf("job progress: %w", err)
	}
	return resp.GetCancelled(), nil
}

// optionalJSON encodes v, or nothing for nil.
func optionalJSON(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	return encodeJSON(v)
}

// decodeRows decodes a JSON array of objects (empty input: no rows).
func decodeRows(data []byte) ([]map[string]any, error) {
	var rows []map[string]any
	if len(data) == 0 {
		return rows, nil
	}
	if err := decodeJSON(data, &rows); err != nil {
		return nil, fmt.Errorf("rows are not a JSON array of objects: %w", err)
	}
	return rows, nil
}
