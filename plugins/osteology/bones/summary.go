package bones

// RegionSummary counts one individual's elements in one region.
type RegionSummary struct {
	Region   string `json:"region"`
	Recorded int    `json:"recorded"` // elements with an entry, present or not
	Present  int    `json:"present"`
	// Conservation of the present elements: every conservation id, plus
	// "unspecified" for present elements without one; zeros included so
	// clients can draw fixed columns.
	Conservation map[string]int `json:"conservation"`
}

// IndividualSummary is one row of GET /osteology/summary.
type IndividualSummary struct {
	ID       any             `json:"id"`
	Label    string          `json:"label"`
	Recorded int             `json:"recorded"`
	Present  int             `json:"present"`
	Regions  []RegionSummary `json:"regions"` // every region, in display order
}

// Unspecified is the conservation key for present elements without one.
const Unspecified = "unspecified"

// Summary validates osteo_data and summarises it (see Summarize). An empty
// document gives an empty, non-nil list.
func Summary(raw []byte) ([]IndividualSummary, []FieldError) {
	doc, errs := Parse(raw)
	if len(errs) > 0 {
		return nil, errs
	}
	return Summarize(doc), nil
}

// Summarize counts, per individual and region, the elements recorded and
// present and the conservation of those present. An element group (ribs,
// carpals, …) counts as one element, as it is one entry.
func Summarize(d *Doc) []IndividualSummary {
	out := []IndividualSummary{}
	if d == nil {
		return out
	}
	for _, ind := range d.Individuals {
		s := IndividualSummary{ID: ind.ID, Label: ind.Label, Regions: make([]RegionSummary, len(regions))}
		at := map[string]*RegionSummary{}
		for i, r := range regions {
			c := map[string]int{Unspecified: 0}
			for _, v := range conservation {
				c[v.ID] = 0
			}
			s.Regions[i] = RegionSummary{Region: r.ID, Conservation: c}
			at[r.ID] = &s.Regions[i]
		}
		for id, b := range ind.Bones {
			el, ok := Lookup(id)
			if !ok { // a Doc built by hand; Parse never lets one through
				continue
			}
			r := at[el.Region]
			r.Recorded++
			s.Recorded++
			if !b.Present {
				continue
			}
			r.Present++
			s.Present++
			if b.Conservation == "" {
				r.Conservation[Unspecified]++
			} else {
				r.Conservation[b.Conservation]++
			}
		}
		out = append(out, s)
	}
	return out
}
