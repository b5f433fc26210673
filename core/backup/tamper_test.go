package backup_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// repack rewrites the archive entry by entry through fn (which may change
// the header's size with the body).
func repack(t *testing.T, data []byte, fn func(h *tar.Header, body []byte) []byte) []byte {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var out bytes.Buffer
	gw := gzip.NewWriter(&out)
	tw := tar.NewWriter(gw)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		body = fn(h, body)
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
	}
	tw.Close()
	gw.Close()
	return out.Bytes()
}

// backuptamper changes one byte of the users' part, the manifest left as
// it was.
func backuptamper(t *testing.T, data []byte) []byte {
	t.Helper()
	done := false
	out := repack(t, data, func(h *tar.Header, body []byte) []byte {
		if !done && strings.HasPrefix(h.Name, "tables/sys_users") {
			body[bytes.Index(body, []byte("reader@"))] = 'R'
			done = true
		}
		return body
	})
	if !done {
		t.Fatal("nothing tampered")
	}
	return out
}

// rewriteManifest re-packs the archive with its manifest changed by fn.
func rewriteManifest(t *testing.T, data []byte, fn func(map[string]any)) []byte {
	t.Helper()
	return repack(t, data, func(h *tar.Header, body []byte) []byte {
		if h.Name != "manifest.json" {
			return body
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		fn(m)
		body, _ = json.Marshal(m)
		h.Size = int64(len(body))
		return body
	})
}
