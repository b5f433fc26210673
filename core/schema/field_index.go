package schema

import (
	"context"
	"fmt"

	"github.com/strata-archaeo/strata/core/store"
)

// indexKind is the index a field implies: unique when asked, a plain one
// on lookups (filters follow them), none otherwise (see addFieldSQL).
type indexKind int

const (
	noIndex indexKind = iota
	plainIndex
	uniqueIndex
)

func (f *Field) indexKind() indexKind {
	switch {
	case f.Unique:
		return uniqueIndex
	case f.IDFromTb != "":
		return plainIndex
	}
	return noIndex
}

// fieldIndexRawName is the unquoted name fieldIndexName quotes.
func fieldIndexRawName(f *Field) string { return fmt.Sprintf("ix_%d_f%d", f.TableID, f.ID) }

// setFieldIndex moves f's implied index from one kind to another. Making
// it unique over duplicate values is unique_violated.
func setFieldIndex(ctx context.Context, tx *store.DB, f *Field, t *Table, from, to indexKind) error {
	if from == to {
		return nil
	}
	if from != noIndex {
		if err := execAll(ctx, tx, "drop index of "+f.Name, dropIndexSQL(tx, fieldIndexRawName(f))); err != nil {
			return err
		}
	}
	if to == noIndex {
		return nil
	}
	kind := "INDEX"
	if to == uniqueIndex {
		kind = "UNIQUE INDEX"
	}
	_, err := tx.Exec(ctx, `CREATE `+kind+` `+fieldIndexName(tx, f)+` ON `+tx.Qualify(t.Name)+` (`+indexKeys(tx.Engine, []string{f.Name}, to == uniqueIndex)+`)`)
	if isUniqueViolation(err) {
		return ErrUniqueViolated.With("field", f.Name).Wrap(err)
	}
	if err != nil {
		return fmt.Errorf("index %s.%s: %w", t.Name, f.Name, err)
	}
	return nil
}
