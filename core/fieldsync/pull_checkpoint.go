package fieldsync

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/records"
)

// checkpoint is where a device's pull of one table stands. It is given to
// the device as an opaque string (encode) and only ever read back from
// one the server made (decodeCheckpoint).
//
// Every position is an id of the app's change log (DESIGN §10):
//   - a first pull in progress pages through the table's rows by id: it
//     started at log id Head (read before any row), and has sent the rows
//     up to id After; once done, its checkpoint is Head, so every row
//     changed while it paged comes again in the next incremental pull;
//   - an incremental pull (Paging false) has consumed the log up to Head.
//
// Filter names the filter the pull keeps (filterKey): a device that
// changes its filter must start again, and is told so (reset).
type checkpoint struct {
	Head   int64
	Paging bool
	After  int64
	Filter string
}

// checkpointVersion starts every checkpoint string: a later format can
// tell its own from these.
const checkpointVersion = "1"

// encode is the opaque string of cp.
func (cp checkpoint) encode() string {
	kind, after := "c", ""
	if cp.Paging {
		kind, after = "p", "."+strconv.FormatInt(cp.After, 10)
	}
	raw := checkpointVersion + kind + "." + strconv.FormatInt(cp.Head, 10) + after + "." + cp.Filter
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// errBadCheckpoint answers a checkpoint the server did not make.
var errBadCheckpoint = records.ErrInvalidParameter.With("parameter", "checkpoint").
	With("detail", "a checkpoint as a previous pull of this table answered it, or empty to start from the beginning")

// decodeCheckpoint reads s (ok false for "": a pull from the beginning).
func decodeCheckpoint(s string) (cp checkpoint, ok bool, err error) {
	if s == "" {
		return checkpoint{}, false, nil
	}
	if len(s) > 200 {
		return checkpoint{}, false, errBadCheckpoint
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || !strings.HasPrefix(string(b), checkpointVersion) {
		return checkpoint{}, false, errBadCheckpoint
	}
	parts := strings.Split(string(b[len(checkpointVersion):]), ".")
	nums := func(ss ...string) ([]int64, bool) {
		out := make([]int64, len(ss))
		for i, x := range ss {
			n, err := strconv.ParseInt(x, 10, 64)
			if err != nil || n < 0 {
				return nil, false
			}
			out[i] = n
		}
		return out, true
	}
	switch {
	case len(parts) == 3 && parts[0] == "c":
		n, good := nums(parts[1])
		if good {
			return checkpoint{Head: n[0], Filter: parts[2]}, true, nil
		}
	case len(parts) == 4 && parts[0] == "p":
		n, good := nums(parts[1], parts[2])
		if good {
			return checkpoint{Head: n[0], Paging: true, After: n[1], Filter: parts[3]}, true, nil
		}
	}
	return checkpoint{}, false, errBadCheckpoint
}

// filterKey names a pull's filter as rendered (nil: none): two requests
// whose filters select the same way have the same key.
func filterKey(c *records.Cond) string {
	if c == nil || c.SQL == "" {
		return ""
	}
	h := sha256.Sum256([]byte(c.SQL + "\x00" + fmt.Sprintf("%#v", c.Args)))
	return hex.EncodeToString(h[:6])
}
