package retention

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/wire"
)

// Setting keys of the retention rules in the application's settings
// (sys_settings), each a decimal number; a key not set is 0.
const (
	KeyVersionsKeep = "retention_versions_keep"
	KeyVersionsDays = "retention_versions_days"
	KeyHistoryDays  = "retention_history_days"
	KeyLogDays      = "retention_log_days"
	// KeyLastRun is when the schedule last started the job for the
	// application (Claim), Unix seconds.
	KeyLastRun = "retention_last_run"
)

// Bounds of the settings. A hundred thousand versions of one record, or a
// century, is as good as everything; the bounds keep the values within
// what the database's arithmetic and a time.Duration can hold.
const (
	MaxVersionsKeep = 100_000
	MaxDays         = 36_500
)

// ErrInvalidSetting is a retention value that is not a whole number
// within its bounds, or a key that is not a retention setting.
var ErrInvalidSetting = errs.New(errs.Invalid, "invalid_setting",
	"a retention setting must be a whole number within its bounds (0 keeps everything)")

// Settings are one application's retention rules; 0 turns a rule off.
// Each rule set prunes on its own (a version goes when versions_keep or
// versions_days would drop it); a record's latest version always stays.
type Settings struct {
	// VersionsKeep keeps the N newest versions of each record.
	VersionsKeep int `json:"versions_keep"`
	// VersionsDays drops versions older than N days.
	VersionsDays int `json:"versions_days"`
	// HistoryDays drops recent-records entries (GET /history) older than
	// N days.
	HistoryDays int `json:"history_days"`
	// LogDays drops application log entries (GET /logs) older than N
	// days, as POST /logs/purge does by hand.
	LogDays int `json:"log_days"`
}

// Any reports whether a rule is set: with none, nothing is ever deleted
// and the schedule starts no job.
func (s Settings) Any() bool {
	return s.VersionsKeep > 0 || s.VersionsDays > 0 || s.HistoryDays > 0 || s.LogDays > 0
}

// field is one setting: its name on the wire, its key, its bound and
// where it lives in Settings.
type field struct {
	name, key string
	max       int
	ptr       func(*Settings) *int
}

var fields = []field{
	{"versions_keep", KeyVersionsKeep, MaxVersionsKeep, func(s *Settings) *int { return &s.VersionsKeep }},
	{"versions_days", KeyVersionsDays, MaxDays, func(s *Settings) *int { return &s.VersionsDays }},
	{"history_days", KeyHistoryDays, MaxDays, func(s *Settings) *int { return &s.HistoryDays }},
	{"log_days", KeyLogDays, MaxDays, func(s *Settings) *int { return &s.LogDays }},
}

// Validate checks every value against its bounds.
func (s Settings) Validate() error {
	for _, f := range fields {
		if v := *f.ptr(&s); v < 0 || v > f.max {
			return ErrInvalidSetting.With("setting", f.name).With("detail", fmt.Sprintf("between 0 and %d", f.max))
		}
	}
	return nil
}

// Read returns the application's rules. A stored value that is not a
// number within its bounds (written by hand) counts as 0: deleting is for
// ever, so a doubtful rule keeps everything.
func Read(ctx context.Context, a *apps.App) (Settings, error) {
	all, err := a.Settings(ctx)
	if err != nil {
		return Settings{}, fmt.Errorf("retention settings of %s: %w", a.Name, err)
	}
	var s Settings
	for _, f := range fields {
		n, err := strconv.Atoi(strings.TrimSpace(all[f.key]))
		if err == nil && n >= 0 && n <= f.max {
			*f.ptr(&s) = n
		}
	}
	return s, nil
}

// Write stores the rules (all of them).
func Write(ctx context.Context, a *apps.App, s Settings) error {
	if err := s.Validate(); err != nil {
		return err
	}
	kv := make(map[string]string, len(fields))
	for _, f := range fields {
		kv[f.key] = strconv.Itoa(*f.ptr(&s))
	}
	if err := a.SetSettings(ctx, kv); err != nil {
		return fmt.Errorf("retention settings of %s: %w", a.Name, err)
	}
	return nil
}

// Patch applies body, a PUT's keys, to s: only the keys sent change, each
// a whole number (a JSON number or a numeric string; null or "" is 0).
// Booleans are refused rather than read as 0/1: a rule that deletes must
// be meant. Every key is checked before any is applied; the first error
// (in key order) is returned.
func Patch(s Settings, body map[string]any) (Settings, error) {
	names := make([]string, 0, len(body))
	for k := range body {
		names = append(names, k)
	}
	sort.Strings(names)
	out := s
	for _, k := range names {
		i := fieldIndex(k)
		if i < 0 {
			return s, ErrInvalidSetting.With("setting", k).With("detail", "not a retention setting: versions_keep, versions_days, history_days or log_days")
		}
		f := fields[i]
		n, err := wholeNumber(body[k])
		if err != nil || n < 0 || n > int64(f.max) {
			return s, ErrInvalidSetting.With("setting", f.name).With("detail", fmt.Sprintf("a whole number between 0 and %d", f.max))
		}
		*f.ptr(&out) = int(n)
	}
	return out, nil
}

func fieldIndex(name string) int {
	for i, f := range fields {
		if f.name == name {
			return i
		}
	}
	return -1
}

// wholeNumber reads a setting's value: nil and "" are 0.
func wholeNumber(v any) (int64, error) {
	switch v.(type) {
	case nil:
		return 0, nil
	case bool:
		return 0, errors.New("a boolean is not a number")
	}
	n, err := wire.Int(v)
	if errors.Is(err, wire.ErrEmpty) {
		return 0, nil
	}
	return n, err
}
