package publish

import (
	"strconv"
	"strings"
	"time"
)

// Citation is a version of the dataset as the usual styles cite it.
type Citation struct {
	APA     string `json:"apa"`
	Chicago string `json:"chicago"`
	BibTeX  string `json:"bibtex"`
	RIS     string `json:"ris"`
}

// citationOf cites version v of the dataset published at published,
// reached at link (its DOI URL when it has one, else its landing page).
func citationOf(app string, cfg Config, v int64, published time.Time, link string) Citation {
	year := strconv.Itoa(published.Year())
	ver := strconv.FormatInt(v, 10)
	publisher := cfg.Publisher
	if publisher == "" && len(cfg.Authors) > 0 {
		publisher = cfg.Authors[0].Name
	}
	var c Citation

	// APA 7: Family, G. G., & Family, G. (Year). Title (Version n) [Data set]. Publisher. link
	apa := make([]string, len(cfg.Authors))
	for i, a := range cfg.Authors {
		apa[i] = apaName(a)
	}
	c.APA = joinAPA(apa) + " (" + year + "). " + cfg.Title + " (Version " + ver + ") [Data set]. " + publisher + ". " + link

	// Chicago (author-date): Family, Given, and Given Family. Year. "Title." Version n. Publisher. link.
	ch := make([]string, len(cfg.Authors))
	for i, a := range cfg.Authors {
		if i == 0 || a.GivenName == "" || a.FamilyName == "" {
			ch[i] = a.Name
		} else {
			ch[i] = a.GivenName + " " + a.FamilyName
		}
	}
	c.Chicago = joinAnd(ch, ", and ") + ". " + year + ". “" + cfg.Title + ".” Version " + ver + ". " + publisher + ". " + link + "."

	// BibTeX: @misc with the dataset's key; braces in values are escaped
	// by doubling nothing: they are removed, as a title rarely needs them.
	bib := make([]string, len(cfg.Authors))
	for i, a := range cfg.Authors {
		bib[i] = "{" + bibSafe(a.Name) + "}"
		if a.GivenName != "" && a.FamilyName != "" {
			bib[i] = bibSafe(a.FamilyName) + ", " + bibSafe(a.GivenName)
		}
	}
	var b strings.Builder
	b.WriteString("@misc{" + bibKey(app) + "_v" + ver + ",\n")
	b.WriteString("  author = {" + strings.Join(bib, " and ") + "},\n")
	b.WriteString("  title = {" + bibSafe(cfg.Title) + "},\n")
	b.WriteString("  year = {" + year + "},\n")
	b.WriteString("  version = {" + ver + "},\n")
	b.WriteString("  publisher = {" + bibSafe(publisher) + "},\n")
	if strings.HasPrefix(link, "https://doi.org/") {
		b.WriteString("  doi = {" + strings.TrimPrefix(link, "https://doi.org/") + "},\n")
	}
	b.WriteString("  url = {" + link + "},\n")
	b.WriteString("  note = {Data set}\n}")
	c.BibTeX = b.String()

	// RIS: TY DATA, one AU per author.
	var r strings.Builder
	r.WriteString("TY  - DATA\r\n")
	for _, a := range cfg.Authors {
		r.WriteString("AU  - " + risSafe(a.Name) + "\r\n")
	}
	r.WriteString("TI  - " + risSafe(cfg.Title) + "\r\n")
	r.WriteString("PY  - " + year + "\r\n")
	r.WriteString("PB  - " + risSafe(publisher) + "\r\n")
	r.WriteString("ET  - " + ver + "\r\n")
	if strings.HasPrefix(link, "https://doi.org/") {
		r.WriteString("DO  - " + strings.TrimPrefix(link, "https://doi.org/") + "\r\n")
	}
	r.WriteString("UR  - " + link + "\r\n")
	r.WriteString("ER  - \r\n")
	c.RIS = r.String()
	return c
}

// apaName is "Family, G. G." (or the name as given for an organisation).
func apaName(a Author) string {
	if a.FamilyName == "" || a.GivenName == "" {
		return a.Name
	}
	var initials []string
	for _, g := range strings.Fields(a.GivenName) {
		r := []rune(g)
		initials = append(initials, string(r[0])+".")
	}
	return a.FamilyName + ", " + strings.Join(initials, " ")
}

func joinAPA(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	case 2:
		return names[0] + ", & " + names[1]
	}
	return strings.Join(names[:len(names)-1], ", ") + ", & " + names[len(names)-1]
}

func joinAnd(names []string, last string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	case 2:
		return names[0] + " and " + names[1]
	}
	return strings.Join(names[:len(names)-1], ", ") + last + names[len(names)-1]
}

func bibSafe(s string) string {
	return strings.NewReplacer("{", "", "}", "", "\\", "", "\n", " ", "\r", " ").Replace(s)
}

func bibKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "dataset"
	}
	return b.String()
}

func risSafe(s string) string { return strings.NewReplacer("\r", " ", "\n", " ").Replace(s) }
