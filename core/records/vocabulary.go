package records

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/strata-archaeo/strata/core/schema"
)

// vocabularyItems is the set of items of vocabulary voc, read once per
// batch. An empty set means the vocabulary has no items yet: nothing to
// hold values to (the schema validation report warns about it).
func (s *Scope) vocabularyItems(ctx context.Context, voc string) (map[string]bool, error) {
	if s.batch != nil {
		if items, ok := s.batch.vocabs[voc]; ok {
			return items, nil
		}
	}
	items, err := schema.VocabularyItems(ctx, s.DB, voc)
	if err != nil {
		return nil, err
	}
	if s.batch != nil {
		s.batch.vocabs[voc] = items
	}
	return items, nil
}

// outsideVocabulary lists the values of v (a select's text, or a
// multi_select's JSON list) that are not items of f's vocabulary. An
// update may keep what the record already stores: existing data that
// predates the vocabulary, or an item since deleted, is reported by the
// schema validation, not refused when the record is saved for another
// reason.
func (s *Scope) outsideVocabulary(ctx context.Context, t *schema.Table, f *schema.Field, v any, selfID int64) ([]string, error) {
	text, ok := v.(string)
	if !ok {
		return nil, nil // a select stored as a number or date is not text a vocabulary holds
	}
	items, err := s.vocabularyItems(ctx, f.VocabularySet)
	if err != nil || len(items) == 0 || items[text] {
		return nil, err // a lone item is accepted whole, commas and all
	}
	var bad []string
	for _, x := range schema.SelectValues(f, text) {
		if x != "" && !items[x] && !slices.Contains(bad, x) {
			bad = append(bad, x)
		}
	}
	if len(bad) == 0 || selfID <= 0 {
		return bad, nil
	}
	kept, err := s.storedText(ctx, t, f, selfID)
	if err != nil {
		return nil, err
	}
	had := schema.SelectValues(f, kept)
	return slices.DeleteFunc(bad, func(x string) bool { return slices.Contains(had, x) }), nil
}

// storedText is field f of row id as stored ("" when empty or absent).
// Only the caller's rows are read: a save of another row fails anyway.
func (s *Scope) storedText(ctx context.Context, t *schema.Table, f *schema.Field, id int64) (string, error) {
	acc, err := s.accessTo(ctx, t)
	if err != nil {
		return "", err
	}
	q := s.DB.Qualify(t.Name)
	where, args := q+`."id" = ?`, []any{id}
	if c := acc.Restrict; c != nil && c.SQL != "" {
		where += ` AND (` + c.SQL + `)`
		args = append(args, c.Args...)
	}
	var stored sql.NullString
	err = s.DB.QueryRow(ctx, `SELECT `+q+`.`+s.DB.Engine.Quote(f.Name)+` FROM `+q+` WHERE `+where, args...).Scan(&stored)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return stored.String, err
}
