package changes_test

import (
	"context"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestRelationsLinksAndKeysAreLogged: a stratigraphic relation and a
// manual link, added or removed, are exactly one update of each of their
// two records, naming who made it; a refused one logs nothing; an API
// key's revocation (once) and deletion are a privilege change of the key
// (Table changes.KeyTable), never of the user with the same id.
func TestRelationsLinksAndKeysAreLogged(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		a, scope := dig(t, e)
		ctx := context.Background()
		if _, err := schema.PutTable(ctx, a.DB, "finds", schema.TableConfig{RS: schema.RSOn(true)}, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		sc := scope()
		var ids []int64
		for range 2 {
			id, _, err := records.Save(ctx, sc, records.SaveInput{Core: map[string]any{"label": "x"}})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		type row struct {
			tb string
			id int64
			op changes.Op
		}
		last := head(t, a.DB)
		expect := func(what string, user int64, want ...row) {
			t.Helper()
			got := since(t, a.DB, last)
			if len(got) != len(want) {
				t.Fatalf("%s: %+v, want %+v", what, got, want)
			}
			for i, w := range want {
				if g := got[i]; g.Table != w.tb || g.RecordID != w.id || g.Op != w.op || g.UserID != user {
					t.Fatalf("%s: change %d is %+v, want %+v by user %d", what, i, g, w, user)
				}
			}
			if len(got) > 0 {
				last = got[len(got)-1].ID
			}
		}
		both := []row{{"finds", ids[0], changes.Update}, {"finds", ids[1], changes.Update}}

		rel, err := records.AddRelation(ctx, sc, ids[1], 5, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		expect("relation added", 1, row{"finds", ids[1], changes.Update}, row{"finds", ids[0], changes.Update})
		if _, err := records.AddRelation(ctx, sc, ids[0], 1, ids[1]); err == nil {
			t.Fatal("the same relation twice")
		}
		expect("relation refused", 1)
		if err := records.DeleteRelation(ctx, sc, rel); err != nil {
			t.Fatal(err)
		}
		expect("relation removed", 1, both...)

		link, err := records.AddManualLink(ctx, a.DB, records.Endpoint{Scope: sc, ID: ids[0]}, records.Endpoint{Scope: sc, ID: ids[1]}, "")
		if err != nil {
			t.Fatal(err)
		}
		expect("link added", 1, both...)
		if err := records.DeleteManualLink(ctx, sc, link); err != nil {
			t.Fatal(err)
		}
		expect("link removed", 1, both...)
		if err := records.DeleteManualLink(ctx, sc, link); err == nil {
			t.Fatal("a link removed twice")
		}
		expect("unknown link", 1)

		k, _, err := auth.CreateAPIKey(ctx, a.DB, "k", auth.Reader, nil, time.Now().UTC())
		if err != nil {
			t.Fatal(err)
		}
		expect("key created", 0)
		for range 2 {
			if _, err := auth.RevokeAPIKey(ctx, a.DB, k.ID, time.Now().UTC()); err != nil {
				t.Fatal(err)
			}
		}
		expect("key revoked (twice)", 0, row{changes.KeyTable, k.ID, changes.Privilege})
		if err := auth.DeleteAPIKey(ctx, a.DB, k.ID); err != nil {
			t.Fatal(err)
		}
		expect("key deleted", 0, row{changes.KeyTable, k.ID, changes.Privilege})
	})
}
