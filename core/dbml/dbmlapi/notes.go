package dbmlapi

import (
	"regexp"
	"strings"
)

// annotations are BraDypUS's bdus:* settings inside a DBML note:
// "bdus:label=My Label bdus:rs=1 bdus:id_from_tb". A value runs to the next
// bdus: key (so it may hold spaces) and is trimmed; a key without "=" is a
// flag. Text before the first key is the note's free text (a column's
// help).
type annotations struct {
	free string
	kv   map[string]string
}

var annotationKey = regexp.MustCompile(`(^|\s)bdus:([A-Za-z0-9_]+)(=?)`)

func parseNote(note string) annotations {
	a := annotations{kv: map[string]string{}}
	idx := annotationKey.FindAllStringSubmatchIndex(note, -1)
	if len(idx) == 0 {
		a.free = strings.TrimSpace(note)
		return a
	}
	a.free = strings.TrimSpace(note[:idx[0][0]])
	for i, m := range idx {
		key := note[m[4]:m[5]]
		end := len(note)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		val := ""
		if m[6] != m[7] { // "=" present
			val = strings.TrimSpace(note[m[1]:end])
		}
		a.kv[key] = val
	}
	return a
}

func (a annotations) has(k string) bool { _, ok := a.kv[k]; return ok }

func (a annotations) get(k string) string { return a.kv[k] }

// on reads a flag: present without a value, or 1/true/yes.
func (a annotations) on(k string) bool {
	v, ok := a.kv[k]
	if !ok {
		return false
	}
	switch strings.ToLower(v) {
	case "", "1", "true", "yes":
		return true
	}
	return false
}

// noteWriter builds a note: free text, then bdus:key=value in the order
// they are added.
type noteWriter struct{ parts []string }

func (w *noteWriter) set(k, v string) {
	if v != "" {
		w.parts = append(w.parts, "bdus:"+k+"="+v)
	}
}

func (w *noteWriter) flag(k string, on bool) {
	if on {
		w.parts = append(w.parts, "bdus:"+k)
	}
}

func (w *noteWriter) String() string { return strings.Join(w.parts, " ") }
