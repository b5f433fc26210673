package records

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

var (
	ErrLinkExists   = errs.New(errs.Conflict, "link_already_exists", "these records are already linked")
	ErrLinkNotFound = errs.New(errs.NotFound, "not_found", "no such link")
	ErrSelfLink     = errs.New(errs.Invalid, "self_link", "a record cannot be linked to itself")
)

// Endpoint is one side of a manual link.
type Endpoint struct {
	Scope *Scope // the caller on that side's table
	ID    int64
}

// AddManualLink links two records (of any tables); the link shows on both.
// The pair is stored in a canonical order so a link either way is one.
func AddManualLink(ctx context.Context, db *store.DB, one, two Endpoint, label string) (int64, error) {
	if one.Scope.Table.Name == two.Scope.Table.Name && one.ID == two.ID {
		return 0, ErrSelfLink
	}
	if one.Scope.Table.Name > two.Scope.Table.Name || (one.Scope.Table.Name == two.Scope.Table.Name && one.ID > two.ID) {
		one, two = two, one
	}
	var id int64
	err := db.Tx(ctx, func(tx *store.DB) error {
		for _, e := range []Endpoint{one, two} {
			ts := *e.Scope
			ts.DB = tx
			if _, err := ts.lockRow(ctx, e.ID); err != nil {
				return err.(*errs.Error).With("table", e.Scope.Table.Name).With("id", e.ID)
			}
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+tx.Sys("manual_links")+` WHERE tb_one = ? AND id_one = ? AND tb_two = ? AND id_two = ?`,
			one.Scope.Table.Name, one.ID, two.Scope.Table.Name, two.ID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return ErrLinkExists
		}
		var lbl any
		if label != "" {
			lbl = label
		}
		if err := tx.QueryRow(ctx, `INSERT INTO `+tx.Sys("manual_links")+` (tb_one, id_one, tb_two, id_two, label, sort, created_at) VALUES (?, ?, ?, ?, ?, 0, ?) RETURNING id`,
			one.Scope.Table.Name, one.ID, two.Scope.Table.Name, two.ID, lbl, one.Scope.now()).Scan(&id); err != nil {
			return err
		}
		// The link is in both records' manualLinks sections.
		for _, e := range []Endpoint{one, two} {
			ts := *e.Scope
			ts.DB = tx
			if err := ts.logChange(ctx, e.ID, changes.Update); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && containsAny(err.Error(), "UNIQUE constraint failed", "SQLSTATE 23505") {
		return 0, ErrLinkExists
	}
	return id, err
}

// ManualLinkEnds returns the tables and ids a link joins.
func ManualLinkEnds(ctx context.Context, db *store.DB, id int64) (tbOne string, idOne int64, tbTwo string, idTwo int64, err error) {
	err = db.QueryRow(ctx, `SELECT tb_one, id_one, tb_two, id_two FROM `+db.Sys("manual_links")+` WHERE id = ?`, id).Scan(&tbOne, &idOne, &tbTwo, &idTwo)
	if isNoRows(err) {
		err = ErrLinkNotFound
	}
	return
}

// DeleteManualLink removes a link, as the caller of scope s (whose
// actor the change log names).
func DeleteManualLink(ctx context.Context, s *Scope, id int64) error {
	return s.DB.Tx(ctx, func(tx *store.DB) error {
		var ends [2]struct {
			tb string
			id int64
		}
		err := tx.QueryRow(ctx, `DELETE FROM `+tx.Sys("manual_links")+` WHERE id = ? RETURNING tb_one, id_one, tb_two, id_two`, id).
			Scan(&ends[0].tb, &ends[0].id, &ends[1].tb, &ends[1].id)
		if isNoRows(err) {
			return ErrLinkNotFound
		}
		if err != nil {
			return err
		}
		// An update of both records (their manualLinks sections).
		for _, e := range ends {
			if err := changes.Record(ctx, tx, changes.Entry{Table: e.tb, RecordID: e.id, Op: changes.Update,
				UserID: s.actorUserID(), Actor: s.actorName()}); err != nil {
				return err
			}
		}
		return nil
	})
}

// queueManualLinks queues the links of the record from either side, with
// the other record's table and label (one query, then one per linked
// table in the next round); the label is null when the caller may not
// see that record. finish gives the section once the pipeline has run.
func (s *Scope) queueManualLinks(ctx context.Context, p *store.Pipeline, id int64) (finish func() obj) {
	type link struct {
		id, refID int64
		refTb     string
		label     *string
		sort      int
	}
	var links []link
	labels := map[string]map[int64]string{}
	p.Query(fmt.Sprintf("manual links of %s %d", s.Table.Name, id), `SELECT id, tb_one, id_one, tb_two, id_two, label, sort FROM `+s.DB.Sys("manual_links")+
		` WHERE (tb_one = ? AND id_one = ?) OR (tb_two = ? AND id_two = ?) ORDER BY sort, id`, []any{s.Table.Name, id, s.Table.Name, id}, func(rows store.Rows) error {
		byTable := map[string][]int64{}
		for rows.Next() {
			var l link
			var t1, t2 string
			var i1, i2 int64
			if err := rows.Scan(&l.id, &t1, &i1, &t2, &i2, &l.label, &l.sort); err != nil {
				return err
			}
			l.refTb, l.refID = t2, i2
			if t1 != s.Table.Name || i1 != id {
				l.refTb, l.refID = t1, i1
			}
			links = append(links, l)
			byTable[l.refTb] = append(byTable[l.refTb], l.refID)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		tables := make([]string, 0, len(byTable))
		for tb := range byTable {
			tables = append(tables, tb)
		}
		sort.Strings(tables)
		for _, tb := range tables {
			if t, ok := s.Catalog.Table(tb); ok {
				labels[tb] = map[int64]string{}
				if err := s.queueLabels(ctx, p, t, byTable[tb], labels[tb]); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return func() obj {
		out := obj{}
		for _, l := range links {
			tbLabel := l.refTb
			if t, ok := s.Catalog.Table(l.refTb); ok {
				tbLabel = t.Label
			}
			var lbl any
			if l.label != nil {
				lbl = *l.label
			}
			out[strconv.FormatInt(l.id, 10)] = obj{"key": l.id, "tb_id": l.refTb, "tb_label": tbLabel,
				"ref_id": l.refID, "ref_label": labelOf(labels[l.refTb], l.refID), "sort": l.sort, "label": lbl}
		}
		return out
	}
}
