package server_test

import (
	"fmt"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestFileChangesAreVersioned: uploading, linking, unlinking, replacing and
// deleting a file each leave a version (operation "files") on the records
// whose files change, holding the files they had; the version's changes
// compare them with the files now.
func TestFileChangesAreVersioned(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		site := f.create(t, f.writer, "sites", `{"name":"Versioned"}`)
		other := f.create(t, f.writer, "sites", `{"name":"Other"}`)
		a, _ := f.uploadOK(t, f.writer, "sites", site, "a.png", pngPixel)
		b, _ := f.uploadOK(t, f.writer, "sites", other, "b.txt", []byte("b"))
		f.must(t, 200, f.writer, "POST", fmt.Sprintf("/dig/api/record/sites/%d/link-file", site), fmt.Sprintf(`{"fileId":%d}`, b))
		var linkA float64
		for _, x := range f.recordFiles(t, f.reader, "sites", site) {
			if m := x.(map[string]any); m["id"] == float64(a) {
				linkA = m["link_id"].(float64)
			}
		}
		f.must(t, 200, f.writer, "DELETE", fmt.Sprintf("/dig/api/file-link/%v", linkA), "")
		if code, m := f.upload(t, f.writer, fmt.Sprintf("/dig/api/file/%d/replace", b), "file", "b2.txt", []byte("b2")); code != 200 {
			t.Fatalf("replace: %d %v", code, m)
		}
		f.must(t, 200, f.writer, "DELETE", fmt.Sprintf("/dig/api/file/%d", b), "")

		// site: upload a, link b, unlink a, replace b, delete b.
		// other: upload b, replace b, delete b.
		for rec, want := range map[int64][]string{
			site:  {"[]", fmt.Sprintf("[%d]", a), fmt.Sprintf("[%d %d]", a, b), fmt.Sprintf("[%d]", b), fmt.Sprintf("[%d]", b)},
			other: {"[]", fmt.Sprintf("[%d]", b), fmt.Sprintf("[%d]", b)},
		} {
			m := f.must(t, 200, f.reader, "GET", fmt.Sprintf("/dig/api/record/sites/%d/versions?per_page=50", rec), "")
			var got []string
			list := m["versions"].([]any)
			for i := len(list) - 1; i >= 0; i-- { // oldest first
				v := list[i].(map[string]any)
				if v["operation"] != "files" {
					t.Fatalf("record %d: operation %v", rec, v["operation"])
				}
				d := f.must(t, 200, f.reader, "GET", fmt.Sprintf("/dig/api/version/%v", v["id"]), "")
				var ids []any
				for _, fr := range d["version"].(map[string]any)["content"].(map[string]any)["files"].([]any) {
					ids = append(ids, fr.(map[string]any)["id"])
				}
				got = append(got, fmt.Sprint(ids))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("record %d: versions hold files %v, want %v", rec, got, want)
			}
		}
		// The newest version of site held b; now it has no file: a change.
		m := f.must(t, 200, f.reader, "GET", fmt.Sprintf("/dig/api/record/sites/%d/versions", site), "")
		d := f.must(t, 200, f.reader, "GET", fmt.Sprintf("/dig/api/version/%v", m["versions"].([]any)[0].(map[string]any)["id"]), "")
		if fmt.Sprint(d["changes"]) == "[]" {
			t.Fatalf("no change shown: %v", d["changes"])
		}
	})
}
