package templates

import (
	"bytes"
	"fmt"
	"html/template"
)

// page is the printed record: A4, print CSS, every value escaped by
// html/template; Markdown fields come as the records' sanitised HTML.
var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
@page { size: A4; margin: 18mm 16mm; }
body { font: 10.5pt/1.4 "DejaVu Sans", Helvetica, Arial, sans-serif; color: #111; margin: 0; }
h1 { font-size: 15pt; margin: 0 0 8mm; }
h2 { font-size: 12pt; margin: 6mm 0 2mm; border-bottom: 0.3mm solid #888; }
h3 { font-size: 11pt; margin: 4mm 0 1mm; }
.row { display: flex; flex-wrap: wrap; gap: 0; }
.f { box-sizing: border-box; padding: 1mm 2mm 2mm 0; break-inside: avoid; }
.w-1-1 { width: 100%; } .w-1-2 { width: 50%; } .w-1-3 { width: 33.33%; } .w-2-3 { width: 66.66%; } .w-1-4 { width: 25%; } .w-3-4 { width: 75%; }
.l { font-size: 8pt; color: #555; text-transform: uppercase; letter-spacing: 0.03em; }
.v { min-height: 1em; }
table.rows { border-collapse: collapse; width: 100%; font-size: 9.5pt; }
table.rows th, table.rows td { border: 0.2mm solid #aaa; padding: 1mm 1.5mm; text-align: left; vertical-align: top; }
.files { display: flex; flex-wrap: wrap; gap: 3mm; margin-top: 4mm; }
.files img { max-width: 60mm; max-height: 60mm; }
</style></head><body>
<h1>{{.Title}}</h1>
{{range .Sections}}{{if .Label}}<h2>{{.Label}}</h2>{{end}}
{{if .Rows}}<table class="rows"><thead><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody></table>{{end}}
{{range .Panels}}{{if .Label}}<h3>{{.Label}}</h3>{{end}}<div class="row">{{range .Fields}}<div class="f {{.Class}}"><div class="l">{{.Label}}</div><div class="v">{{.Value}}</div></div>{{end}}</div>{{end}}
{{end}}
{{if .Images}}<div class="files">{{range .Images}}<img src="{{.}}" alt="">{{end}}</div>{{end}}
</body></html>
`))

type viewField struct {
	Label, Class string
	Value        any    // string or template.HTML (sanitised Markdown)
	Markdown     string // a Markdown field's source (the PDF lays it out itself)
	Width        float64
}

type viewPanel struct {
	Label  string
	Fields []viewField
}

type viewSection struct {
	Label   string
	Panels  []viewPanel
	Columns []string
	Rows    [][]string
}

type view struct {
	Title    string
	Sections []viewSection
	Images   []string   // thumbnail addresses (HTML)
	Files    []imageRef // the record's JPEG and PNG files (PDF)
}

// imageRef is one of the record's files a PDF can embed as it is.
type imageRef struct {
	ID   int64
	Type string // "JPG" or "PNG", as fpdf names them
}

// Render lays the full record rec (records.Read's map) out by sections
// as standalone HTML.
func Render(title string, sections []Section, rec map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	if err := page.Execute(&buf, layout(title, sections, rec)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// layout is what both renderings print: the sections with their labels
// and values, the plugin rows, the record's images.
func layout(title string, sections []Section, rec map[string]any) view {
	core, _ := rec["core"].(map[string]any)
	plugins, _ := rec["plugins"].(map[string]any)
	v := view{Title: title}
	for _, s := range sections {
		vs := viewSection{Label: s.Label}
		switch s.Type {
		case "plugin":
			p, _ := plugins[s.Plugin].(map[string]any)
			rows, _ := p["data"].([]map[string]any)
			for _, it := range s.Items {
				vs.Columns = append(vs.Columns, it.Field)
			}
			for _, r := range rows {
				line := make([]string, 0, len(s.Items))
				for _, it := range s.Items {
					e, _ := r[it.Field].(map[string]any)
					if lbl, ok := e["label"].(string); ok && len(vs.Rows) == 0 {
						vs.Columns[len(line)] = lbl
					}
					line = append(line, text(e["val"]))
				}
				vs.Rows = append(vs.Rows, line)
			}
			if len(rows) == 0 {
				vs.Rows = [][]string{}
			}
		case "accordion":
			for _, p := range s.Panels {
				vs.Panels = append(vs.Panels, viewPanel{Label: p.Label, Fields: fields(core, p.Fields)})
			}
		default:
			vs.Panels = []viewPanel{{Fields: fields(core, s.Items)}}
		}
		v.Sections = append(v.Sections, vs)
	}
	if fl, ok := rec["files"].([]map[string]any); ok {
		for _, f := range fl {
			if u, ok := f["thumb_url"].(string); ok && u != "" {
				v.Images = append(v.Images, u)
			}
			id, _ := f["id"].(int64)
			switch f["mime"] {
			case "image/jpeg":
				v.Files = append(v.Files, imageRef{ID: id, Type: "JPG"})
			case "image/png":
				v.Files = append(v.Files, imageRef{ID: id, Type: "PNG"})
			}
		}
	}
	return v
}

func fields(core map[string]any, items []Item) []viewField {
	out := make([]viewField, 0, len(items))
	for _, it := range items {
		e, _ := core[it.Field].(map[string]any)
		w := it.Width
		if w == "" {
			w = "1/1"
		}
		f := viewField{Label: it.Field, Class: "w-" + string([]byte{w[0], '-', w[2]}), Width: float64(w[0]-'0') / float64(w[2]-'0')}
		if l, ok := e["label"].(string); ok {
			f.Label = l
		}
		switch {
		case e["html"] != nil:
			f.Value = template.HTML(text(e["html"])) // sanitised by records (bluemonday)
			f.Markdown = text(e["val"])
		case e["val_label"] != nil:
			f.Value = text(e["val_label"])
		default:
			f.Value = text(e["val"])
		}
		out = append(out, f)
	}
	return out
}

func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "✓"
		}
		return "✗"
	case []any:
		var b bytes.Buffer
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(text(e))
		}
		return b.String()
	}
	return fmt.Sprint(v)
}
