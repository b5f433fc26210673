package fieldsync

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/wire"
)

// The mutation rows of migration 0031 (sys_sync_mutations): held while
// they wait for their predecessor, done once applied (or refused), with
// the answer they gave.
const (
	stateHeld = "held"
	stateDone = "done"
)

// ResultRetention is how long the answer of a done mutation is kept to be
// given again to a device that sends it again; after it, the row goes (a
// device that has not synced for a month sends a batch that long applied
// again: its mutation_ids are new to the server then).
const ResultRetention = 30 * 24 * time.Hour

// storedMutation is a row of sys_sync_mutations.
type storedMutation struct {
	MutationID string
	DeviceID   string
	Seq        int64
	State      string
	Body       string // the mutation while held
	Result     string // its answer once done
	ReceivedAt int64
}

const mutationColumns = `mutation_id, device_id, seq, state, COALESCE(body, ''), COALESCE(result, ''), received_at`

func scanMutation(scan func(...any) error) (*storedMutation, error) {
	var m storedMutation
	err := scan(&m.MutationID, &m.DeviceID, &m.Seq, &m.State, &m.Body, &m.Result, &m.ReceivedAt)
	return &m, err
}

// findMutation is actor's mutation mid (ok false: never received, or its
// answer has been trimmed).
func findMutation(ctx context.Context, db *store.DB, actor, mid string) (*storedMutation, bool, error) {
	m, err := scanMutation(db.QueryRow(ctx, `SELECT `+mutationColumns+` FROM `+db.Sys("sync_mutations")+
		` WHERE actor = ? AND mutation_id = ?`, actor, mid).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read sync mutation: %w", err)
	}
	return m, true, nil
}

// storedResult is a done mutation's answer.
func (m *storedMutation) storedResult() (result, error) {
	var r result
	if err := wire.Decode([]byte(m.Result), &r, wire.Options{ExactNumbers: true}); err != nil {
		return r, fmt.Errorf("stored sync result of %s: %w", m.MutationID, err)
	}
	return r, nil
}

// lastSeq is how far actor's device has been applied (0: nothing yet).
func lastSeq(ctx context.Context, db *store.DB, actor, device string) (int64, error) {
	var n int64
	err := db.QueryRow(ctx, `SELECT last_seq FROM `+db.Sys("sync_devices")+` WHERE actor = ? AND device_id = ?`,
		actor, device).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read sync device: %w", err)
	}
	return n, nil
}

// ensureDevice makes actor's device's row (last_seq 0) unless it exists,
// so that moving its last_seq is always a conditional UPDATE.
func ensureDevice(ctx context.Context, db *store.DB, actor, device string, now int64) error {
	_, err := db.Exec(ctx, `INSERT INTO `+db.Sys("sync_devices")+` (actor, device_id, last_seq, updated_at) VALUES (?, ?, 0, ?)`+
		` ON CONFLICT (actor, device_id) DO NOTHING`, actor, device, now)
	if err != nil {
		return fmt.Errorf("make sync device: %w", err)
	}
	return nil
}

// advanceDevice moves the device's last_seq from seq - 1 to seq, in the
// mutation's transaction; false when it was not at seq - 1 (another node
// applied something of the device in between).
func advanceDevice(ctx context.Context, tx *store.DB, actor, device string, seq, now int64) (bool, error) {
	res, err := tx.Exec(ctx, `UPDATE `+tx.Sys("sync_devices")+` SET last_seq = ?, updated_at = ?`+
		` WHERE actor = ? AND device_id = ? AND last_seq = ?`, seq, now, actor, device, seq-1)
	if err != nil {
		return false, fmt.Errorf("advance sync device: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// skipDevice moves the device's last_seq up to seq when it is below: a
// held mutation applied without its predecessor.
func skipDevice(ctx context.Context, tx *store.DB, actor, device string, seq, now int64) error {
	_, err := tx.Exec(ctx, `UPDATE `+tx.Sys("sync_devices")+` SET last_seq = ?, updated_at = ?`+
		` WHERE actor = ? AND device_id = ? AND last_seq < ?`, seq, now, actor, device, seq)
	if err != nil {
		return fmt.Errorf("move sync device: %w", err)
	}
	return nil
}

// heldCount is how many mutations of actor's device wait.
func heldCount(ctx context.Context, db *store.DB, actor, device string) (int, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Sys("sync_mutations")+
		` WHERE actor = ? AND device_id = ? AND state = ?`, actor, device, stateHeld).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count held sync mutations: %w", err)
	}
	return n, nil
}

// holdMutation stores m to wait for its predecessor. false: a mutation
// of that id is already stored (the same push arrived twice at once).
func holdMutation(ctx context.Context, db *store.DB, actor string, m *mutation, now int64) (bool, error) {
	body, err := m.encode()
	if err != nil {
		return false, err
	}
	res, err := db.Exec(ctx, `INSERT INTO `+db.Sys("sync_mutations")+
		` (actor, mutation_id, device_id, seq, state, body, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)`+
		` ON CONFLICT (actor, mutation_id) DO NOTHING`, actor, m.MutationID, m.DeviceID, m.Seq, stateHeld, body, now)
	if err != nil {
		return false, fmt.Errorf("hold sync mutation: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// heldSeqTaken reports whether another mutation of the device already
// waits with seq (a device that numbered two mutations alike).
func heldSeqTaken(ctx context.Context, db *store.DB, actor, device string, seq int64) (bool, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Sys("sync_mutations")+
		` WHERE actor = ? AND device_id = ? AND state = ? AND seq = ?`, actor, device, stateHeld, seq).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read held sync mutations: %w", err)
	}
	return n > 0, nil
}

// heldUpTo lists the device's held mutations with a seq up to upTo (0:
// any), in seq order, at most limit.
func heldUpTo(ctx context.Context, db *store.DB, actor, device string, upTo int64, limit int) ([]*storedMutation, error) {
	q := `SELECT ` + mutationColumns + ` FROM ` + db.Sys("sync_mutations") + ` WHERE actor = ? AND device_id = ? AND state = ?`
	args := []any{actor, device, stateHeld}
	if upTo > 0 {
		q += ` AND seq <= ?`
		args = append(args, upTo)
	}
	rows, err := db.Query(ctx, q+` ORDER BY seq, mutation_id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("read held sync mutations: %w", err)
	}
	defer rows.Close()
	var out []*storedMutation
	for rows.Next() {
		m, err := scanMutation(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// claimNew stores mutation m as done (its answer comes with finish) in
// the transaction that applies it. false: it was already stored, by
// another request or node, which applies it or has.
func claimNew(ctx context.Context, tx *store.DB, actor string, m *mutation, now int64) (bool, error) {
	res, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("sync_mutations")+
		` (actor, mutation_id, device_id, seq, state, received_at, done_at) VALUES (?, ?, ?, ?, ?, ?, ?)`+
		` ON CONFLICT (actor, mutation_id) DO NOTHING`, actor, m.MutationID, m.DeviceID, m.Seq, stateDone, now, now)
	if err != nil {
		return false, fmt.Errorf("claim sync mutation: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// claimHeld turns a held mutation to done in the transaction that
// applies it: the first statement of that transaction, so on PostgreSQL a
// second node's claim waits on the row lock and then finds it done
// (false), and SQLite has one writer. The state changes with the save or
// not at all: never applied twice, never lost.
func claimHeld(ctx context.Context, tx *store.DB, actor, mid string, now int64) (bool, error) {
	res, err := tx.Exec(ctx, `UPDATE `+tx.Sys("sync_mutations")+` SET state = ?, body = NULL, done_at = ?`+
		` WHERE actor = ? AND mutation_id = ? AND state = ?`, stateDone, now, actor, mid, stateHeld)
	if err != nil {
		return false, fmt.Errorf("claim held sync mutation: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// finish stores a done mutation's answer, in its transaction.
func finish(ctx context.Context, tx *store.DB, actor, mid string, r result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("sync_mutations")+` SET result = ? WHERE actor = ? AND mutation_id = ?`,
		string(b), actor, mid); err != nil {
		return fmt.Errorf("store sync result: %w", err)
	}
	return nil
}

// trimResults drops the answers of mutations done longer ago than the
// retention, app-wide: bounded, whoever pushes.
func trimResults(ctx context.Context, db *store.DB, now time.Time) error {
	_, err := db.Exec(ctx, `DELETE FROM `+db.Sys("sync_mutations")+` WHERE state = ? AND done_at < ?`,
		stateDone, now.Add(-ResultRetention).UnixMilli())
	if err != nil {
		return fmt.Errorf("trim sync results: %w", err)
	}
	return nil
}
