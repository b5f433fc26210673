package schema

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/strata-archaeo/strata/core/store"
)

// maxReportedValues caps the values one report line names.
const maxReportedValues = 10

// vocabularyValues reports, for every select and multi_select field that
// enforces its vocabulary (Field.VocabEnforced), the stored values that
// are not items of it: data entered before the vocabulary, or kept when an
// item was deleted with keep_values. Saves do not refuse a record for
// keeping such a value; this report is where they are found.
func (c *checker) vocabularyValues(ctx context.Context, present map[string]bool) error {
	c.add(CheckHead, "", "Values outside their vocabulary")
	found := false
	for _, t := range c.st.cat.Tables {
		if !present[t.Name] {
			continue
		}
		for _, f := range t.Fields {
			if !f.VocabEnforced() || f.DBType != DBText || !c.vocabs[f.VocabularySet] {
				continue
			}
			bad, rows, err := c.outside(ctx, t, f)
			if err != nil {
				return err
			}
			if len(bad) == 0 {
				continue
			}
			found = true
			names := make([]string, 0, len(bad))
			for v := range bad {
				names = append(names, v)
			}
			sort.Slice(names, func(i, j int) bool {
				if bad[names[i]] != bad[names[j]] {
					return bad[names[i]] > bad[names[j]]
				}
				return names[i] < names[j]
			})
			more := ""
			if len(names) > maxReportedValues {
				more = fmt.Sprintf(" and %d more", len(names)-maxReportedValues)
				names = names[:maxReportedValues]
			}
			shown := make([]string, len(names))
			for i, v := range names {
				shown[i] = fmt.Sprintf("%q (%d)", v, bad[v])
			}
			c.add(CheckWarning, "vocabulary_values", fmt.Sprintf("Field %s.%s: %d records hold values outside vocabulary %s: %s%s",
				t.Name, f.Name, rows, f.VocabularySet, strings.Join(shown, ", "), more))
		}
	}
	if !found {
		c.add(CheckSuccess, "vocabulary_values", "Every select field bound to a vocabulary holds only its items")
	}
	return nil
}

// outside counts, per value, the rows of t whose field f holds a value
// that is not an item of f's vocabulary, and how many rows hold any.
func (c *checker) outside(ctx context.Context, t *Table, f *Field) (map[string]int, int, error) {
	db := c.db
	col := db.Engine.Quote(f.Name)
	q := `SELECT ` + col + `, COUNT(*) FROM ` + db.Qualify(t.Name) + ` WHERE ` + col + ` IS NOT NULL AND ` + col + ` <> ''`
	args := []any{}
	if f.Type != TypeMultiSelect {
		// A plain select compares whole values in the database; a
		// multi_select's JSON lists are read and split below.
		q += ` AND ` + col + ` NOT IN (SELECT value FROM ` + db.Sys("vocabularies") + ` WHERE voc = ?)`
		args = append(args, f.VocabularySet)
	}
	items, err := vocabularyItemSet(ctx, c, f.VocabularySet)
	if err != nil {
		return nil, 0, err
	}
	rows, err := db.Query(ctx, q+` GROUP BY `+col, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("values of %s.%s: %w", t.Name, f.Name, err)
	}
	defer rows.Close()
	bad, total := map[string]int{}, 0
	for rows.Next() {
		var stored sql.NullString
		var n int
		if err := rows.Scan(&stored, &n); err != nil {
			return nil, 0, err
		}
		hit := false
		for _, v := range SelectValues(f, stored.String) {
			if v != "" && !items[v] {
				bad[v] += n
				hit = true
			}
		}
		if hit {
			total += n
		}
	}
	return bad, total, rows.Err()
}

// vocabularyItemSet reads the items of vocabulary voc once per report.
func vocabularyItemSet(ctx context.Context, c *checker, voc string) (map[string]bool, error) {
	if items, ok := c.items[voc]; ok {
		return items, nil
	}
	items, err := VocabularyItems(ctx, c.db, voc)
	if err != nil {
		return nil, err
	}
	if c.items == nil {
		c.items = map[string]map[string]bool{}
	}
	c.items[voc] = items
	return items, nil
}

// VocabularyItems is the set of items of vocabulary voc, as stored: the
// one read behind the save's vocabulary rule and this report.
func VocabularyItems(ctx context.Context, db *store.DB, voc string) (map[string]bool, error) {
	rows, err := db.Query(ctx, `SELECT value FROM `+db.Sys("vocabularies")+` WHERE voc = ?`, voc)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	items := map[string]bool{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		items[v] = true
	}
	return items, rows.Err()
}
