package server_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// testPicture is a w×h picture of colour bands, encoded by enc.
func testPicture(t *testing.T, w, h int, enc func(*bytes.Buffer, image.Image) error) []byte {
	t.Helper()
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.Set(x, y, color.RGBA{uint8(40 + 200*x/w), uint8(60 + 150*y/h), 140, 255})
		}
	}
	var buf bytes.Buffer
	if err := enc(&buf, m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var pdfPageCount = regexp.MustCompile(`/Type /Pages\s*/Kids \[[^\]]*\]\s*/Count (\d+)`)

// TestPrintTemplatePDF: ?format=pdf gives the record laid out by the
// template as an A4 PDF with its fonts and the record's JPEG and PNG
// files embedded; the text (checked with pdftotext when poppler is
// installed) has the lookup's label, the Markdown as text without its
// markup, the plugin rows, and values printed as they are.
func TestPrintTemplatePDF(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		const api = "/dig/api"
		if code, m := f.do(t, f.super, "PUT", api+"/config/table/units", `{"id_field":"code"}`); code != 200 {
			t.Fatalf("id_field: %d %v", code, m)
		}
		site := f.create(t, f.writer, "sites", `{"name":"Pompei"}`)
		unit := f.create(t, f.writer, "units", fmt.Sprintf(`{"code":"US 1 — Ægean","site":%d}`, site))
		notes := "## Scavo\\n\\n**Ceramica** fine, *decorata* a rilievo.\\n\\n- primo frammento\\n- secondo frammento\\n\\n<script>alert(1)</script>"
		code, m := f.do(t, f.writer, "POST", api+"/record/finds", fmt.Sprintf(`{"core":{"label":"F1<&>","unit":%d,"notes":"%s","weight":"12.5"},`+
			`"plugins":{"finds_samples":[{"lab":"Lab <i>A</i>","bp":"120"},{"lab":"Oxford","bp":"3200"}]}}`, unit, notes))
		if code != 200 {
			t.Fatalf("record: %d %v", code, m)
		}
		find := int64(m["id"].(float64))
		f.uploadOK(t, f.writer, "finds", find, "trench.jpg", testPicture(t, 800, 500, func(b *bytes.Buffer, m image.Image) error { return jpeg.Encode(b, m, nil) }))
		f.uploadOK(t, f.writer, "finds", find, "section.png", testPicture(t, 300, 400, func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) }))
		f.uploadOK(t, f.writer, "finds", find, "notes.txt", []byte("not an image"))
		tpl := `{"sections":[{"label":"Main","content":[{"field":"label","width":"1/2"},{"field":"unit","width":"1/2"},{"field":"notes"}]},` +
			`{"type":"plugin","plugin":"finds_samples","label":"Samples","content":["lab","bp"]},` +
			`{"type":"accordion","label":"More","content":[{"label":"Weights","fields":[{"field":"weight","width":"1/3"}]}]}]}`
		if code, m := f.do(t, f.super, "POST", api+"/template/finds/scheda", tpl); code != 200 {
			t.Fatalf("save: %d %v", code, m)
		}
		url := fmt.Sprintf("%s/template/finds/scheda/render/%d", api, find)

		rec := f.send(t, f.reader, "GET", url+"?format=pdf", nil, nil)
		pdf := rec.Body.Bytes()
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/pdf" {
			t.Fatalf("pdf: %d %s %.300s", rec.Code, rec.Header().Get("Content-Type"), pdf)
		}
		if !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.Contains(pdf[len(pdf)-32:], []byte("%%EOF")) {
			t.Fatalf("not a whole PDF: %.40q … %q", pdf, pdf[max(0, len(pdf)-32):])
		}
		pages := pdfPageCount.FindSubmatch(pdf)
		if pages == nil {
			t.Fatalf("no page tree")
		}
		if n, _ := strconv.Atoi(string(pages[1])); n < 1 || n > 3 {
			t.Fatalf("pages: %d", n)
		}
		if n := bytes.Count(pdf, []byte("/Subtype /Image")); n != 2 {
			t.Fatalf("images embedded: %d, want the JPEG and the PNG", n)
		}
		if !bytes.Contains(pdf, []byte("/FontFile2")) || !bytes.Contains(pdf, []byte("/MediaBox [0 0 595.28 841.89]")) {
			t.Fatalf("no embedded TrueType font or not A4")
		}
		if dir := os.Getenv("STRATA_KEEP_PDF"); dir != "" { // to look at it
			os.WriteFile(filepath.Join(dir, "template-"+string(e)+".pdf"), pdf, 0o644)
		}
		if _, err := exec.LookPath("pdftotext"); err == nil {
			p := filepath.Join(t.TempDir(), "r.pdf")
			if err := os.WriteFile(p, pdf, 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("pdftotext", "-layout", p, "-").Output()
			if err != nil {
				t.Fatalf("pdftotext: %v", err)
			}
			txt := string(out)
			for _, want := range []string{"F1<&>", "US 1 — Ægean", "UNIT", "Scavo", "Ceramica fine, decorata a rilievo.", "• primo frammento", "Lab <i>A</i>", "3200", "Samples", "Weights", "12.5"} {
				if !strings.Contains(txt, want) {
					t.Fatalf("pdf text lacks %q:\n%s", want, txt)
				}
			}
			for _, no := range []string{"**", "<script>", "## "} {
				if strings.Contains(txt, no) {
					t.Fatalf("pdf text has markup %q:\n%s", no, txt)
				}
			}
		} else {
			t.Log("pdftotext not installed: the PDF's text is not checked")
		}

		for _, tc := range []struct {
			name, who, url string
			status         int
			code           string
		}{
			{"bad format", f.reader, url + "?format=docx", 400, "invalid_parameter"},
			{"unknown record", f.reader, fmt.Sprintf("%s/template/finds/scheda/render/%d?format=pdf", api, find+100), 404, "record_not_found"},
			{"unknown template", f.reader, fmt.Sprintf("%s/template/finds/nope/render/%d?format=pdf", api, find), 404, "template_not_found"},
			{"signed out", "", url + "?format=pdf", 401, ""},
		} {
			code, m := f.do(t, tc.who, "GET", tc.url, "")
			if code != tc.status || (tc.code != "" && m["code"] != tc.code) {
				t.Fatalf("%s: %d %v", tc.name, code, m)
			}
		}
	})
}
