package files

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-archaeo/strata/core/store"
)

// ListQuery selects a page of the files list.
type ListQuery struct {
	Page, PerPage int
	OrphansOnly   bool
	Search        string // over name, description and keywords (case-insensitive)
}

// ListResult is a page of files with their links.
type ListResult struct {
	Total int64
	Files []map[string]any
}

// List returns a page of the files the caller may see, newest first, each
// with its links ([{id, tb, record_id, sort}]). Administrators see every
// file; others the files linked to records they may read (orphans are for
// administrators).
func List(ctx context.Context, db *store.DB, app string, c Caller, q ListQuery) (*ListResult, error) {
	var conds []string
	var args []any
	l := db.Sys("file_links")
	if q.OrphansOnly {
		if !c.Admin {
			return &ListResult{Files: []map[string]any{}}, nil
		}
		conds = append(conds, `NOT EXISTS (SELECT 1 FROM `+l+` l WHERE l.file_id = f.id)`)
	}
	if !c.Admin {
		scopes, err := c.Tables(ctx)
		if err != nil {
			return nil, err
		}
		var alts []string
		for _, sc := range scopes { // only the tables the caller may read (Caller.Tables)
			sub, subArgs := sc.RowsSQL()
			alts = append(alts, `(l.tb = ? AND l.record_id IN (`+sub+`))`)
			args = append(append(args, sc.Table.Name), subArgs...)
		}
		if len(alts) == 0 {
			return &ListResult{Files: []map[string]any{}}, nil
		}
		conds = append(conds, `EXISTS (SELECT 1 FROM `+l+` l WHERE l.file_id = f.id AND (`+strings.Join(alts, " OR ")+`))`)
	}
	if t := strings.TrimSpace(q.Search); t != "" {
		pat := "%" + escapeLike(store.Fold(t)) + "%"
		var parts []string
		for _, col := range []string{"f.filename", "f.ext", "f.description", "f.keywords"} {
			parts = append(parts, db.FoldSQL(col)+` LIKE ? ESCAPE '\'`)
			args = append(args, pat)
		}
		conds = append(conds, "("+strings.Join(parts, " OR ")+")")
	}
	where := "1 = 1"
	if len(conds) > 0 {
		where = strings.Join(conds, " AND ")
	}
	from := ` FROM ` + db.Sys("files") + ` f WHERE ` + where
	res := &ListResult{Files: []map[string]any{}}
	if err := db.QueryRow(ctx, `SELECT COUNT(*)`+from, args...).Scan(&res.Total); err != nil {
		return nil, fmt.Errorf("count files: %w", err)
	}
	rows, err := db.Query(ctx, `SELECT f.id, f.filename, f.ext, f.mime, f.size, f.sha256, f.description, f.keywords, f.printable, f.blob_key, COALESCE(f.thumb_key, ''), f.created_at, f.creator`+
		from+` ORDER BY f.id DESC LIMIT ? OFFSET ?`, append(args, q.PerPage, (q.Page-1)*q.PerPage)...)
	if err != nil {
		return nil, fmt.Errorf("list files: %w", err)
	}
	var list []*File
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		list = append(list, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	ids := make([]int64, len(list))
	for i, f := range list {
		ids[i] = f.ID
	}
	links, err := LinksOf(ctx, db, ids)
	if err != nil {
		return nil, err
	}
	for _, f := range list {
		e := Entry(ctx, app, f)
		ls := links[f.ID]
		if ls == nil {
			ls = []Link{}
		}
		e["links"] = ls
		res.Files = append(res.Files, e)
	}
	return res, nil
}

func escapeLike(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}
